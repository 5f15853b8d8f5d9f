import { IsString, Length } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';

@ForbidUnknownProperties()
export class ModelCallsDto {
  @IsString() @Length(1, 200) trialId!: string;
}
