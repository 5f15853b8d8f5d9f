import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { IsChannel, IsInstant, IsPromptId, IsVersion, Optional } from '../prompt.fields';

/** Strict: a misspelt `version` or `channel` must not silently answer another version. */
@ForbidUnknownProperties()
export class GetPromptDto {
  @IsPromptId()
  id!: string;

  @Optional(IsVersion())
  version?: number | null;

  @Optional(IsChannel())
  channel?: string | null;

  @Optional(IsInstant())
  at?: string | null;
}
