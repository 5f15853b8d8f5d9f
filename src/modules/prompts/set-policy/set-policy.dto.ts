import { Type } from 'class-transformer';
import { IsInt, IsNumber, IsObject, Max, Min, ValidateIf, ValidateNested } from 'class-validator';
import { ForbidUnknownProperties } from '#infrastructure/http/decode/decode.pipe';
import { IsChannel } from '../prompt.fields';

export const MAX_MIN_TRIALS = 100_000;

export class EvidenceRequirementDto {
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'Expected a number' })
  @Min(0, { message: 'must be from 0 to 1' })
  @Max(1, { message: 'must be from 0 to 1' })
  minPassRate!: number;

  @IsInt({ message: 'Expected an integer' })
  @Min(1, { message: `must be from 1 to ${MAX_MIN_TRIALS}` })
  @Max(MAX_MIN_TRIALS, { message: `must be from 1 to ${MAX_MIN_TRIALS}` })
  minTrials!: number;
}

/** Strict: a misspelt bar must not silently leave a channel ungated. `requireEvidence: null` lifts the gate. */
@ForbidUnknownProperties()
export class SetPromptPolicyDto {
  @IsChannel()
  channel!: string;

  @ValidateIf((policy: SetPromptPolicyDto) => policy.requireEvidence !== null)
  @IsObject({ message: 'Expected an object {minPassRate, minTrials}, or null to lift the gate' })
  @ValidateNested()
  @Type(() => EvidenceRequirementDto)
  requireEvidence!: EvidenceRequirementDto | null;
}
