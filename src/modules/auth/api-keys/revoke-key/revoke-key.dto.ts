import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { IsString, Length } from 'class-validator';

/** Credential operations refuse unknown properties: a typo must not pass silently. */
@ForbidUnknownProperties()
export class RevokeKeyDto {
  @IsString()
  @Length(1, 100)
  id!: string;
}
