import { IsBoolean, IsOptional, IsString, Length } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';

@ForbidUnknownProperties()
export class FinishLocalBatchDto {
  @IsString() @Length(1, 200) id!: string;
  @IsOptional() @IsBoolean() cancelled?: boolean;
}
