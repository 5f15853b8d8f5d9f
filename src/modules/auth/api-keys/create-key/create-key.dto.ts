import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsString, Length } from 'class-validator';
import { EachIn } from '#infrastructure/http/decode/each-element';
import { Permission, PERMISSIONS } from '#shared/permissions';

/** Credential operations refuse unknown properties: a typo must not pass silently. */
@ForbidUnknownProperties()
export class CreateKeyDto {
  @IsString()
  @Length(1, 100)
  name!: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PERMISSIONS.length)
  @ArrayUnique()
  @EachIn(PERMISSIONS)
  permissions!: Permission[];
}
