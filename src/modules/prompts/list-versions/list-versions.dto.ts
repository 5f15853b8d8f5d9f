import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { IsPromptId } from '../prompt.fields';

@ForbidUnknownProperties()
export class ListVersionsDto {
  @IsPromptId()
  id!: string;
}
