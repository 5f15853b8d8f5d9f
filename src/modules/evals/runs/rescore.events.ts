import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { JudgeValidator } from '#shared/eval-definitions';
import type { JudgeModelUse } from '#trial-runner';
import type { ValidationRecord } from '#trial-runner';
import type { Distribution } from '../trials/distribution';

type RescoreRef = { rescoreId: string; runId: string; batchId: string; organization: string };

/**
 * Stored first in `rescore-{rescoreId}`: a judge-form validator run again over a finished run's
 * stored conversations. The run's own events and documents are never changed by it.
 */
export type RunRescored = DomainEvent<
  'RunRescored',
  RescoreRef & { validator: JudgeValidator; original: Distribution; rescored: Distribution; judge: JudgeModelUse | null; rescoredAt: string }
>;

/** One trial's new validations, linked to the original trial by its id, after RunRescored. */
export type TrialRescored = DomainEvent<
  'TrialRescored',
  RescoreRef & { trialId: string; originalStatus: string; status: 'passed' | 'failed' | 'void'; validations: ValidationRecord[] }
>;

export const rescoreStream = (rescoreId: string) => `rescore-${rescoreId}`;
