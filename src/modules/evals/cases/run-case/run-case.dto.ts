import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { EachString } from '#infrastructure/http/decode/each-element';
import { SLUG } from '../../shared/definition.dto';

/** `evals.cases.run`: a start like `evals.batches.start`, so unknown properties are refused too. */
@ForbidUnknownProperties()
export class RunCaseDto {
  @IsString() @Length(1, 100) @Matches(SLUG, { message: 'must be lower-case words joined by "-"' }) id!: string;
  @IsOptional() @IsInt() @Min(1) @Max(10) trials: number = 1;
  @IsOptional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(20) @EachString(1, 200) variants?: string[];
}
