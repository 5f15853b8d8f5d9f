import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  Equals,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { EachString } from '#infrastructure/http/decode/each-element';

/**
 * A local runner's validation records, bounded as the server's own trials make them
 * (execution/validation/validation-record.ts): captures of at most 64,000 characters plus the cut
 * marker, at most 64 calls and 64 logs, one record per manifest entry (at most 20).
 */
const MAX_CAPTURE_CHARS = 64_000 + 100;
const MAX_MS = 7 * 24 * 3_600_000;
const MAX_MILLIS = 1e15;
const MAX_TOKENS = 1e12;
const notNull = (field: string) => (object: Record<string, unknown>) => object[field] !== null;

@ForbidUnknownProperties()
export class CaptureDto {
  @IsString() @MaxLength(MAX_CAPTURE_CHARS) text!: string;
  @IsIn(['text', 'json']) format!: 'text' | 'json';
  @IsIn(['captured', 'omitted', 'empty']) state!: 'captured' | 'omitted' | 'empty';
  @IsBoolean() truncated!: boolean;
}

@ForbidUnknownProperties()
export class ValidationCallDto {
  @IsInt() @Min(1) @Max(64) index!: number;
  @Equals('answer') method!: 'answer';
  @IsInt() @Min(0) @Max(MAX_MILLIS) startedAt!: number;
  @IsInt() @Min(0) @Max(MAX_MS) durationMs!: number;
  @IsObject() @ValidateNested() @Type(() => CaptureDto) input!: CaptureDto;
  @IsObject() @ValidateNested() @Type(() => CaptureDto) output!: CaptureDto;
  @IsObject() @ValidateNested() @Type(() => CaptureDto) error!: CaptureDto;
}

@ForbidUnknownProperties()
export class ValidationLogDto {
  @IsInt() @Min(1) @Max(64) index!: number;
  @IsInt() @Min(0) @Max(MAX_MILLIS) at!: number;
  @IsIn(['stdout', 'stderr', 'log']) level!: 'stdout' | 'stderr' | 'log';
  @IsObject() @ValidateNested() @Type(() => CaptureDto) value!: CaptureDto;
}

@ForbidUnknownProperties()
export class JudgmentUsageDto {
  @IsInt() @Min(0) @Max(MAX_TOKENS) inputTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) outputTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) cacheReadTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) cacheWriteTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) cacheWrite1hTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) totalTokens!: number;
  @ValidateIf(notNull('costUsd')) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1e6) costUsd!: number | null;
}

@ForbidUnknownProperties()
export class JudgmentDto {
  @IsString() @Length(1, 200) name!: string;
  @IsString() @Length(1, 200) model!: string;
  @IsString() @Length(1, 100) evaluator!: string;
  @ValidateIf(notNull('score')) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) score!: number | null;
  @ValidateIf(notNull('choice')) @IsString() @Length(1, 100) choice!: string | null;
  @ValidateIf(notNull('reason')) @IsString() @MaxLength(4000) reason!: string | null;
  @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1) threshold!: number;
  @IsInt() @Min(0) @Max(MAX_MS) durationMs!: number;
  @ValidateIf(notNull('error')) @IsString() @MaxLength(4000) error!: string | null;
  @ValidateIf(notNull('usage')) @IsObject() @ValidateNested() @Type(() => JudgmentUsageDto) usage!: JudgmentUsageDto | null;
}

@ForbidUnknownProperties()
export class ValidationRecordDto {
  @IsString() @Length(1, 100) id!: string;
  @IsInt() @Min(1) @Max(1000) index!: number;
  @IsString() @MaxLength(200) name!: string;
  @IsIn(['code', 'judge']) kind!: 'code' | 'judge';
  @IsIn(['queued', 'running', 'passed', 'failed', 'error', 'skipped']) status!: 'queued' | 'running' | 'passed' | 'failed' | 'error' | 'skipped';
  @IsInt() @Min(0) @Max(MAX_MILLIS) startedAt!: number;
  @IsInt() @Min(0) @Max(MAX_MS) durationMs!: number;
  @ValidateIf(notNull('message')) @IsString() @MaxLength(4000) message!: string | null;
  @ValidateIf(notNull('exitCode')) @IsInt() @Min(0) @Max(255) exitCode!: number | null;
  @IsBoolean() truncated!: boolean;
  @IsObject() @ValidateNested() @Type(() => CaptureDto) input!: CaptureDto;
  @IsObject() @ValidateNested() @Type(() => CaptureDto) output!: CaptureDto;
  @IsObject() @ValidateNested() @Type(() => CaptureDto) error!: CaptureDto;
  @IsArray() @ArrayMaxSize(64) @ValidateNested({ each: true }) @Type(() => ValidationCallDto) calls!: ValidationCallDto[];
  @IsArray() @ArrayMaxSize(64) @ValidateNested({ each: true }) @Type(() => ValidationLogDto) logs!: ValidationLogDto[];
  @ValidateIf(notNull('judgment')) @IsObject() @ValidateNested() @Type(() => JudgmentDto) judgment!: JudgmentDto | null;
  @IsObject() @ValidateNested() @Type(() => CaptureDto) metadata!: CaptureDto;
}

/** The token counts and price of a class of model calls (the judge's, the agent's through the gateway). */
export class ModelTokensDto {
  @IsInt() @Min(0) @Max(MAX_TOKENS) inputTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) outputTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) cacheReadTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) cacheWriteTokens!: number;
  @IsInt() @Min(0) @Max(MAX_TOKENS) totalTokens!: number;
  @ValidateIf(notNull('usd')) @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(1e6) usd!: number | null;
}

/** The LLM judge's model use, priced on the runner's machine; the saga records it as the trial's `judge` cost. */
@ForbidUnknownProperties()
export class JudgeModelDto extends ModelTokensDto {
  @IsString() @Length(1, 100) provider!: string;
  @IsArray() @ArrayMaxSize(64) @EachString(1, 200) models!: string[];
  @IsInt() @Min(0) @Max(10000) calls!: number;
}
