import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsInt, IsOptional, Max, Min, ValidateNested } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { CaseDto, SuiteDto, VariantDto } from '../shared/definition.dto';

/** The body of `evals.batches.start`: no unknown property is allowed anywhere in it. */
@ForbidUnknownProperties()
export class StartBatchDto {
  @ValidateNested() @Type(() => SuiteDto) suite!: SuiteDto;
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(100) @ValidateNested({ each: true }) @Type(() => CaseDto) cases!: CaseDto[];
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(20) @ValidateNested({ each: true }) @Type(() => VariantDto) variants!: VariantDto[];
  @IsInt() @Min(1) @Max(10) trials!: number;
  @IsOptional() @IsBoolean() checksIn?: boolean;
}
