import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { AGENT_HARNESSES, HARNESSES } from '../../shared/definitions';

/** The harness a list is for when the body names none: the first agent harness. */
export const DEFAULT_MODEL_HARNESS = AGENT_HARNESSES[0];

/** `evals.models.list`: `{q, harness?}`; a missing `q` lists every model. */
export class ListModelsDto {
  @IsOptional() @IsString() @MaxLength(200) q: string = '';
  @IsOptional() @IsIn(HARNESSES) harness: string = DEFAULT_MODEL_HARNESS;
}
