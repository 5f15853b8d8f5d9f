import { IsString, Length } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';

/** `evals.trials.diff`: `{trialId}`. */
@ForbidUnknownProperties()
export class TrialDiffDto {
  @IsString() @Length(1, 200) trialId!: string;
}

/** `evals.trials.artifact`: `{trialId, path}`, a path of the trial's artifacts as the trial lists it. */
@ForbidUnknownProperties()
export class TrialArtifactDto {
  @IsString() @Length(1, 200) trialId!: string;
  @IsString() @Length(1, 4096) path!: string;
}
