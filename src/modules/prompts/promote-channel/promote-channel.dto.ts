import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { IsChannel, IsPromptId, IsVersion } from '../prompt.fields';

export class EvidenceDto {
  @IsString({ message: 'Expected a string' })
  @Length(1, 100, { message: 'must be 1 to 100 characters' })
  @Matches(/^[A-Za-z0-9_-]+$/, { message: 'must be a batch id (A-Z, a-z, 0-9, "_" and "-")' })
  batchId!: string;
}

/** The spec's request; like the spec's other bodies but the start, extras are dropped. */
export class PromoteChannelDto {
  @IsChannel()
  channel!: string;

  @IsPromptId()
  id!: string;

  @IsVersion()
  version!: number;

  /** The batch that vouches for the version: required by a channel with a policy, recorded always. */
  @IsOptional()
  @IsObject({ message: 'Expected an object {batchId}' })
  @ValidateNested()
  @Type(() => EvidenceDto)
  evidence?: EvidenceDto | null;
}
