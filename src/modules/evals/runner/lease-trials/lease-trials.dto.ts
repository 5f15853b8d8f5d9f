import { IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';

@ForbidUnknownProperties()
export class LeaseTrialsDto {
  @IsString() @Length(1, 200) id!: string;
  @IsOptional() @IsInt() @Min(1) @Max(50) max?: number;
}
