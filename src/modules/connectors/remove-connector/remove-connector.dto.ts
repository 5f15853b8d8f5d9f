import { IsString, Length } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';

@ForbidUnknownProperties()
export class RemoveConnectorDto {
  @IsString({ message: 'Expected a string' })
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  id!: string;
}
