import { IsString, Length } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { MAX_NAME_LENGTH } from '../variable-rules';

@ForbidUnknownProperties()
export class RemoveVariableDto {
  @IsString({ message: 'Expected a string' })
  @Length(1, MAX_NAME_LENGTH, { message: `must be 1 to ${MAX_NAME_LENGTH} characters` })
  name!: string;
}
