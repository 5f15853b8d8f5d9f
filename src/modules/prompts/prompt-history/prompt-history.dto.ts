import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { IsChannel, IsPromptId, Optional } from '../prompt.fields';

/** Strict: a misspelt `channel` must not silently widen the answer to the whole history. */
@ForbidUnknownProperties()
export class PromptHistoryDto {
  @IsPromptId()
  id!: string;

  @Optional(IsChannel())
  channel?: string | null;
}
