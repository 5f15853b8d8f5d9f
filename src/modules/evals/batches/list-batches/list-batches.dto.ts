import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { CursorPageDto } from '../../shared/cursor';
import { SLUG } from '../../shared/definition.dto';

/** `evals.batches.list`: `{cursor?, limit?, suite?}`. */
export class ListBatchesDto extends CursorPageDto {
  /** A suite id: that suite's batches only (a batch runs one suite). */
  @IsOptional() @IsString() @Length(1, 100) @Matches(SLUG, { message: 'must be lower-case words joined by "-"' }) suite?: string;
}
