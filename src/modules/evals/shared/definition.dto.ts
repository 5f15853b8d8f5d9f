import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  Equals,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { EachString } from '#infrastructure/http/decode/each-element';
import { IsStringRecord, IsUnionOf, unionMember } from '#infrastructure/http/decode/shapes';
import { RESERVED_VARIABLE_NAMES, RESERVED_VARIABLE_PREFIXES, UNRESERVED_VARIABLE_PATTERN } from '#shared/reserved-variables';
import { AGENT_HARNESSES, HARNESSES, MAX_BUDGET_CALLS, MAX_BUDGET_TOKENS, MAX_BUDGET_USD, SANDBOXES } from '#shared/eval-definitions';
import { JudgeValidatorDto } from './judge-validator.dto';

/** The spec's case and suite id rule. */
export const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** A profile's variable: a valid name that is not reserved (PATH, LD_*, ASSAY_*…: they would change how the sandbox starts). */
const PROFILE_ENV_NAME = new RegExp(`${UNRESERVED_VARIABLE_PATTERN.source}[A-Za-z_][A-Za-z0-9_]*$`);
const PROFILE_ENV_RULE =
  `names are letters, digits and "_", not starting with a digit, and not reserved ` +
  `(${RESERVED_VARIABLE_NAMES.join(', ')}, or starting with ${RESERVED_VARIABLE_PREFIXES.join(', ')})`;
const present = (field: string) => (object: Record<string, unknown>) => object[field] !== undefined;

export class EmptySourceDto {
  @Equals('empty') kind!: 'empty';
}

export class RepoSourceDto {
  @Equals('repo') kind!: 'repo';
  @IsString() @MinLength(1) url!: string;
  @ValidateIf((o: RepoSourceDto) => o.ref !== null) @IsString() ref!: string | null;
}

export class FilesSourceDto {
  @Equals('files') kind!: 'files';
  @IsStringRecord() files!: Record<string, string>;
}

const SOURCE_KINDS = { empty: EmptySourceDto, repo: RepoSourceDto, files: FilesSourceDto };
const SOURCE_DESCRIPTION = '{ kind: "empty" } | { kind: "repo", url, ref } | { kind: "files", files }';
export type SourceDto = EmptySourceDto | RepoSourceDto | FilesSourceDto;

export class SuiteDto {
  @IsString() @Length(1, 100) @Matches(SLUG, { message: 'must be lower-case words joined by "-"' }) id!: string;
  @IsString() @Length(1, 200000) prompt!: string;
  @IsOptional()
  @IsUnionOf(Object.keys(SOURCE_KINDS), SOURCE_DESCRIPTION)
  @ValidateNested()
  @Type(unionMember(SOURCE_KINDS))
  source?: SourceDto | null;
  @IsOptional() @IsString() @Length(1, 200) name?: string;
}

export class CacheDto {
  @IsString() @MinLength(1) key!: string;
  @IsString() @MinLength(1) path!: string;
}

export class SimulatedUserDto {
  @Equals('simulated') kind!: 'simulated';
  @IsString() @Length(1, 2000) goal!: string;
  @IsString() @Length(1, 8000) prompt!: string;
  @IsOptional() @IsIn(AGENT_HARNESSES) harness?: string;
  @IsOptional() @IsString() @Length(1, 200) model?: string;
}

export class ScriptedUserDto {
  @Equals('scripted') kind!: 'scripted';
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(24) @EachString(1, 4000) replies!: string[];
}

const USER_KINDS = { simulated: SimulatedUserDto, scripted: ScriptedUserDto };

export class PrepareDto {
  @IsString() @Length(1, 100) name!: string;
  @IsString() @Length(1, 1000000) source!: string;
}

export class ManifestEntryDto {
  @IsInt() @Min(0) index!: number;
  @IsString() @MaxLength(200) name!: string;
}

/** A source as its author wrote it: its path as the suite file names it, and its text. */
export class WrittenSourceDto {
  @IsString() @Length(1, 500) path!: string;
  @IsString() @Length(1, 1000000) content!: string;
}

export class ValidatorDto {
  @IsOptional() @Equals('code') kind?: 'code';
  @IsString() @Length(1, 200) name!: string;
  @IsString() @Length(1, 1000000) source!: string;
  @IsOptional() @IsBoolean() capture?: boolean;
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => ManifestEntryDto)
  manifest?: ManifestEntryDto[];
  /** The module as written, beside its bundle in `source`: shown with the run, never run. */
  @IsOptional() @ValidateNested() @Type(() => WrittenSourceDto) written?: WrittenSourceDto;
}

/** The validator's form: `kind: "judge"` is the judge form, anything else the first (code) form. */
function validatorForm(options?: { object: Record<string, unknown>; property: string }) {
  const value = options?.object[options.property];
  const judge = typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'judge';
  return judge ? JudgeValidatorDto : ValidatorDto;
}

export class CaseDto {
  @IsString() @Length(1, 100) @Matches(SLUG, { message: 'must be lower-case words joined by "-"' }) id!: string;
  @IsOptional() @IsString() @Length(1, 200) name?: string;
  @IsOptional() @ValidateNested() @Type(() => CacheDto) cache?: CacheDto;
  @IsOptional() @IsInt() @Min(1) @Max(50) maxTurns?: number | null;
  @IsOptional() @IsInt() @Min(1000) @Max(3600000) timeoutMs?: number | null;
  @IsOptional()
  @IsUnionOf(Object.keys(USER_KINDS), '{ kind: "simulated", goal, prompt } | { kind: "scripted", replies }')
  @ValidateNested()
  @Type(unionMember(USER_KINDS))
  user?: SimulatedUserDto | ScriptedUserDto | null;
  @IsOptional() @ValidateNested() @Type(() => PrepareDto) prepare?: PrepareDto | null;
  @ValidateIf(present('source'))
  @IsUnionOf(Object.keys(SOURCE_KINDS), SOURCE_DESCRIPTION)
  @ValidateNested()
  @Type(unionMember(SOURCE_KINDS))
  source?: SourceDto;
  @IsOptional() @IsArray() @ArrayMaxSize(12) @EachString(1, 40) tags?: string[];
  @IsOptional() @IsStringRecord() variables?: Record<string, string>;
  @IsOptional() @ValidateNested() @Type(validatorForm) validator?: ValidatorDto | JudgeValidatorDto | null;
  @IsOptional() @IsString() @Length(1, 100000) verify?: string | null;
}

/** What an agent may spend through the model gateway (each bound optional). */
export class BudgetDto {
  @IsOptional() @IsInt() @Min(1) @Max(MAX_BUDGET_CALLS) maxModelCalls?: number;
  @IsOptional() @IsInt() @Min(1) @Max(MAX_BUDGET_TOKENS) maxTokens?: number;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0.000001) @Max(MAX_BUDGET_USD) maxUsd?: number;
}

/** A recorded batch whose model calls answer this variant's (gateway.recordBodies on the server that ran it). */
export class ReplayDto {
  @IsString() @Length(1, 200) batchId!: string;
  @IsIn(['fallback', 'strict']) mode!: 'fallback' | 'strict';
}

/** A provider name as ASSAY_CONFIG writes it. */
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export class ProfileDto {
  @IsOptional() @IsString() @Length(1, 200) name?: string;
  @IsOptional() @IsString() @Length(1, 100000) install?: string;
  @IsOptional() @IsString() @Length(1, 100000) run?: string;
  @IsOptional()
  @IsStringRecord({ keyPattern: PROFILE_ENV_NAME, keyRule: PROFILE_ENV_RULE })
  env?: Record<string, string>;
  @IsOptional() @IsStringRecord() files?: Record<string, string>;
  @IsOptional()
  @IsString()
  @Matches(PROVIDER_NAME, { message: 'must name a provider of the server (ASSAY_CONFIG providers): 1 to 63 of letters, digits, ".", "_" and "-"' })
  provider?: string;
  @IsOptional() @ValidateNested() @Type(() => BudgetDto) budget?: BudgetDto;
  @IsOptional() @ValidateNested() @Type(() => ReplayDto) replay?: ReplayDto;
}

export class CredentialsDto {
  @IsOptional() @IsString() @Length(1, 200) harnessConnectionId?: string;
  @IsOptional() @IsString() @Length(1, 200) sandboxConnectionId?: string;
}

export class VariantDto {
  @IsIn(HARNESSES) harness!: string;
  @IsString() @Length(1, 200) model!: string;
  @IsOptional() @ValidateNested() @Type(() => ProfileDto) profile?: ProfileDto;
  @IsOptional() @IsIn(SANDBOXES) sandbox?: string;
  @IsOptional() @ValidateNested() @Type(() => CredentialsDto) credentials?: CredentialsDto;
}
