import { IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { SLUG } from '../../shared/definition.dto';

/** `evals.runs.list`: a case's runs, optionally of one of its variants, 20 to a page. */
export class ListRunsDto {
  @IsString() @Length(1, 100) @Matches(SLUG, { message: 'must be lower-case words joined by "-"' }) caseId!: string;
  @IsOptional() @IsString() @Length(1, 200) variant?: string;
  /** Page 1 is the first. */
  @IsOptional() @IsInt() @Min(1) @Max(1_000_000) page: number = 1;
}
