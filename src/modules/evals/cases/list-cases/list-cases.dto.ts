import { IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { SLUG } from '../../shared/definition.dto';
import { CursorPageDto } from '../../shared/cursor';

/** `evals.cases.list`: paging plus three filters that all apply together. */
export class ListCasesDto extends CursorPageDto {
  /** A case-insensitive substring of the case id or name; empty matches every case. */
  @IsOptional() @IsString() @MaxLength(200) q?: string;
  @IsOptional() @IsString() @Length(1, 100) @Matches(SLUG, { message: 'must be lower-case words joined by "-"' }) suite?: string;
  @IsOptional() @IsString() @Length(1, 40) tag?: string;
}
