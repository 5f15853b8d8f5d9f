import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { EachString } from '#infrastructure/http/decode/each-element';
import { JudgeModelDto, ModelTokensDto, ValidationRecordDto } from './report-validation.dto';
import type { ConversationEndReason } from '#trial-runner';

/**
 * A local runner's report is untrusted input: every field is bounded here as the server's own
 * trials are (the per-command output cap, which is the operator's setting, is checked by the
 * handler). The largest output the DTO lets through is the cap's own maximum (16 MiB) plus the
 * cut marker; the handler holds each to this server's ASSAY_OUTPUT_CAP.
 */
export const MAX_TRAJECTORY_ENTRIES = 1000;
const MAX_OUTPUT_CHARS = 16 * 1024 * 1024 + 256;
const MAX_MS = 7 * 24 * 3_600_000;
const MAX_TOKENS = 1e12;
const notNull = (field: string) => (object: Record<string, unknown>) => object[field] !== null;
const END_REASONS = ['single-turn', 'user-done', 'replies-exhausted', 'max-turns', 'timeout', 'failed', 'agent-cannot-continue'];
const tagged =
  (...tags: string[]) =>
  (object: Record<string, unknown>) =>
    tags.includes(object._tag as string);
const WIRE_PROTOCOLS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'];

@ForbidUnknownProperties()
export class TrajectoryEntryDto {
  @IsIn(['command', 'message', 'conversation', 'prepare', 'model-call', 'tool-call']) _tag!:
    'command' | 'message' | 'conversation' | 'prepare' | 'model-call' | 'tool-call';
  // command
  @ValidateIf(tagged('command')) @IsString() @Length(1, 100000) command?: string;
  @ValidateIf(tagged('command')) @IsInt() @Min(0) @Max(255) exitCode?: number;
  @ValidateIf(tagged('command', 'model-call')) @IsInt() @Min(0) @Max(1e15) startedAtMillis?: number;
  @ValidateIf(tagged('command', 'model-call')) @IsInt() @Min(0) @Max(1e15) finishedAtMillis?: number;
  @ValidateIf((object: Record<string, unknown>) => object._tag === 'command' || (object._tag === 'tool-call' && object.output !== null))
  @IsString()
  @MaxLength(MAX_OUTPUT_CHARS)
  output?: string | null;
  @ValidateIf(tagged('command')) @IsBoolean() outputTruncated?: boolean;
  // message
  @ValidateIf(tagged('message')) @IsIn(['user', 'agent']) role?: 'user' | 'agent';
  @ValidateIf(tagged('message', 'model-call', 'tool-call')) @IsInt() @Min(1) @Max(1000) turn?: number;
  @ValidateIf(tagged('message')) @IsString() @MaxLength(MAX_OUTPUT_CHARS) text?: string;
  @ValidateIf(tagged('message', 'tool-call')) @IsInt() @Min(0) @Max(1e15) at?: number;
  // conversation
  @ValidateIf(tagged('conversation')) @IsInt() @Min(0) @Max(1000) turns?: number;
  @ValidateIf(tagged('conversation')) @IsIn(END_REASONS) endReason?: string;
  // prepare (its result, at most 16,000 characters of JSON, is checked by the handler)
  @ValidateIf(tagged('prepare')) @IsString() @Length(1, 100) name?: string;
  @ValidateIf(tagged('prepare')) @IsInt() @Min(0) @Max(MAX_MS) durationMs?: number;
  @ValidateIf((object: Record<string, unknown>) => object._tag === 'prepare' && object.result !== null) @IsObject() result?: Record<string, unknown> | null;
  // tool-call (the agent's own output reported it)
  @ValidateIf(tagged('tool-call')) @IsString() @Length(1, 200) tool?: string;
  @ValidateIf(tagged('tool-call')) @IsString() @MaxLength(MAX_OUTPUT_CHARS) input?: string;
  // model-call (the runner's own gateway metered it)
  @ValidateIf(tagged('model-call')) @IsString() @Length(1, 100) provider?: string;
  @ValidateIf(tagged('model-call')) @IsString() @MaxLength(200) model?: string;
  @ValidateIf(tagged('model-call')) @IsIn(WIRE_PROTOCOLS) protocol?: 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
  @ValidateIf(tagged('model-call')) @IsBoolean() stream?: boolean;
  @ValidateIf(tagged('model-call')) @IsInt() @Min(100) @Max(599) status?: number;
  @ValidateIf((object: Record<string, unknown>) => object._tag === 'model-call' && object.firstTokenMs !== null) @IsInt() @Min(0) @Max(MAX_MS) firstTokenMs?:
    number | null;
  @ValidateIf(tagged('model-call')) @IsInt() @Min(0) @Max(MAX_TOKENS) inputTokens?: number;
  @ValidateIf(tagged('model-call')) @IsInt() @Min(0) @Max(MAX_TOKENS) outputTokens?: number;
  @ValidateIf(tagged('model-call')) @IsInt() @Min(0) @Max(MAX_TOKENS) cacheReadTokens?: number;
  @ValidateIf(tagged('model-call')) @IsInt() @Min(0) @Max(MAX_TOKENS) cacheWriteTokens?: number;
}

@ForbidUnknownProperties()
export class VerifyStepDto {
  @IsString() @Length(1, 100000) command!: string;
  @IsInt() @Min(0) @Max(255) exitCode!: number;
}

@ForbidUnknownProperties()
export class ArtifactDto {
  @IsString() @Length(1, 4096) path!: string;
  @IsInt() @Min(1) @Max(Number.MAX_SAFE_INTEGER) byteSize!: number;
  @IsString() @Matches(/^[0-9a-f]{64}$/, { message: 'must be 64 lower-case hex digits' }) sha256!: string;
}

@ForbidUnknownProperties()
export class UsageDto {
  @IsInt() @Min(0) @Max(MAX_TOKENS) inputTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) outputTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) cacheReadTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) cacheWriteTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) totalTokens!: number;
  @ValidateIf(notNull('costUsd')) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1e6) costUsd!: number | null;
}

/** Agent turns and why the conversation ended (the trial runner's `conversation`). */
@ForbidUnknownProperties()
export class ConversationDto {
  @IsInt() @Min(0) @Max(1000) turns!: number;
  @IsIn(END_REASONS) endReason!: ConversationEndReason;
}

/**
 * The simulated user's model use, priced on the runner's machine (its configuration's price);
 * the saga records it as the trial's `user` cost. A case has at most 50 turns; a call per turn,
 * with retries, stays far below the bound on calls.
 */
@ForbidUnknownProperties()
export class UserModelDto {
  @IsString() @Length(1, 100) provider!: string;
  @IsString() @Length(1, 200) model!: string;
  @IsInt() @Min(0) @Max(10000) calls!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) inputTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) outputTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) cacheReadTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) cacheWriteTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) totalTokens!: number;
  @ValidateIf(notNull('usd')) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1e6) usd!: number | null;
}

/** The agent's metered model use, priced on the runner's machine; the saga records it as the trial's `model` cost. */
@ForbidUnknownProperties()
export class AgentModelDto extends ModelTokensDto {
  @IsString() @Length(1, 100) provider!: string;
  @IsArray() @ArrayMaxSize(100) @EachString(0, 200) models!: string[];
  @IsInt() @Min(0) @Max(1000000) calls!: number;
}

/** A TrialOutcome as the trial runner produced it on the runner's machine. */
@ForbidUnknownProperties()
export class TrialResultDto {
  @IsIn(['passed', 'failed', 'void']) status!: 'passed' | 'failed' | 'void';
  @ValidateIf(notNull('exitCode')) @IsInt() @Min(0) @Max(255) exitCode!: number | null;
  @ValidateIf(notNull('failure')) @IsString() @Length(1, 240) failure!: string | null;
  @IsArray() @ArrayMaxSize(20) @EachString(1, 100) voidFields!: string[];
  @IsBoolean() serviceFault!: boolean;
  @IsBoolean() timed!: boolean;
  @IsArray() @ArrayMaxSize(MAX_TRAJECTORY_ENTRIES) @ValidateNested({ each: true }) @Type(() => TrajectoryEntryDto) trajectory!: TrajectoryEntryDto[];
  @IsArray() @ArrayMaxSize(100) @ValidateNested({ each: true }) @Type(() => VerifyStepDto) verifySteps!: VerifyStepDto[];
  @IsArray() @ArrayMaxSize(10000) @EachString(1, 4096) filesChanged!: string[];
  @IsArray() @ArrayMaxSize(10000) @ValidateNested({ each: true }) @Type(() => ArtifactDto) artifacts!: ArtifactDto[];
  @IsInt() @Min(0) @Max(MAX_MS) modelMs!: number;
  @IsInt() @Min(0) @Max(MAX_MS) sandboxMs!: number;
  @ValidateIf(notNull('sandboxId')) @IsString() @Length(1, 100) sandboxId!: string | null;
  @ValidateIf(notNull('usage')) @IsObject() @ValidateNested() @Type(() => UsageDto) usage!: UsageDto | null;
  @ValidateIf(notNull('harnessVersion')) @IsString() @Length(1, 200) harnessVersion!: string | null;
  @IsOptional() @IsIn(['bubblewrap', 'process', null]) sandboxDriver?: 'bubblewrap' | 'process' | null;
  /** Absent or null: the trial ended before a conversation could (older runners send neither). */
  @IsOptional() @IsObject() @ValidateNested() @Type(() => ConversationDto) conversation?: ConversationDto | null;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => UserModelDto) userModel?: UserModelDto | null;
  /** The validator's records (absent: none ran, or an older runner). */
  @IsOptional() @IsArray() @ArrayMaxSize(20) @ValidateNested({ each: true }) @Type(() => ValidationRecordDto) validations?: ValidationRecordDto[];
  @IsOptional() @IsObject() @ValidateNested() @Type(() => JudgeModelDto) judgeModel?: JudgeModelDto | null;
  /** The agent's calls through the runner's model gateway (absent or null: it used none). */
  @IsOptional() @IsObject() @ValidateNested() @Type(() => AgentModelDto) agentModel?: AgentModelDto | null;
}

@ForbidUnknownProperties()
export class ReportTrialDto {
  @IsString() @Length(1, 200) id!: string;
  @IsString() @Length(1, 200) trialId!: string;
  /** The lease id runner.trials.lease gave. */
  @IsString() @Length(1, 200) lease!: string;
  @IsObject() @ValidateNested() @Type(() => TrialResultDto) result!: TrialResultDto;
}
