import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { IsInstant } from '../prompt.fields';

/** Strict: `{at}` only. */
@ForbidUnknownProperties()
export class PromptsSnapshotDto {
  @IsInstant()
  at!: string;
}
