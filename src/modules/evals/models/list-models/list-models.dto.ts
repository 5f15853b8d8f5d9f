import { IsIn, IsString, MaxLength, ValidateIf } from 'class-validator';
import { AGENT_HARNESSES, HARNESSES } from '#shared/eval-definitions';

/** The harness a list is for when the body names none: the first agent harness. */
export const DEFAULT_MODEL_HARNESS = AGENT_HARNESSES[0];

/** Checked unless left out: unlike IsOptional, a `null` is checked too (and refused as a Type issue). */
const given = (field: 'q' | 'harness') => (dto: Partial<Record<'q' | 'harness', unknown>>) => dto[field] !== undefined;

/**
 * `evals.models.list`: `{q, harness?}`; a missing `q` lists every model. `null` for either is
 * refused rather than taken for "left out": the spec gives `q` as a string, and a `null` one
 * reached the search (`toLowerCase` of null: a 500).
 */
export class ListModelsDto {
  @ValidateIf(given('q')) @IsString() @MaxLength(200) q: string = '';
  @ValidateIf(given('harness')) @IsIn(HARNESSES) harness: string = DEFAULT_MODEL_HARNESS;
}
