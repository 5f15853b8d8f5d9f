import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { IsFlag, IsPromptId, IsText, MAX_CONTENT_LENGTH, MAX_MESSAGE_LENGTH, MAX_NAME_LENGTH, Optional } from '../prompt.fields';

/** Strict: a misspelt `publish` or `message` must not be dropped while the content is written. */
@ForbidUnknownProperties()
export class CreateVersionDto {
  @IsPromptId()
  id!: string;

  @IsText(1, MAX_CONTENT_LENGTH)
  content!: string;

  @Optional(IsText(1, MAX_NAME_LENGTH))
  name?: string | null;

  @Optional(IsText(1, MAX_MESSAGE_LENGTH))
  message?: string | null;

  @Optional(IsFlag())
  publish?: boolean | null;
}
