import type { Collection } from '#infrastructure/read-store/read-store.port';
import { evolveGuarded } from '#infrastructure/processing/projection';
import type { Recorded } from '../../typed-projection';
import type { PlannedRun } from '../batches/batch.events';
import type { RunFinished } from '../runs/run.events';
import { computeDistribution, Distribution, storedDistribution, TrialTally } from '../trials/distribution';
import type { TrialCommandRecorded, TrialScored, TrialStarted, TrialVoided } from '../trials/trial.events';

/**
 * The case projection's own record of each run: what a case's variant shows of its newest run
 * (status and distribution), folded from the run's events here, so the case projection depends
 * on no other projection's documents nor on the order projections are registered in.
 */
export const CASE_RUNS = 'eval_case_runs';

export type CaseRunDocument = {
  _id: string;
  organization: string;
  caseId: string;
  status: 'running' | 'finished' | 'failed';
  /** Each trial's state as far as the distribution counts it. */
  trials: Array<TrialTally & { id: string }>;
  distribution: Distribution;
  /** The log position this document reflects (see ProjectedDocument). */
  _position: number;
};

/** The events that change a run's status or distribution. */
export type RunProgress = TrialStarted | TrialCommandRecorded | TrialScored | TrialVoided | RunFinished;

export const RUN_PROGRESS_TYPES: ReadonlyArray<RunProgress['type']> = ['TrialStarted', 'TrialCommandRecorded', 'TrialScored', 'TrialVoided', 'RunFinished'];

/** A run as its batch starts: every trial queued. */
export function plannedRun(organization: string, run: PlannedRun, position: number): CaseRunDocument {
  const trials = run.trialIds.map((id) => ({ id, status: 'queued', commands: 0 }));
  return { _id: run.runId, organization, caseId: run.caseId, status: 'running', trials, distribution: computeDistribution(trials), _position: position };
}

/** As the run projection counts them: a finish stores its distribution; a trial event recomputes it. */
function progressed(run: CaseRunDocument, event: Recorded<RunProgress>): CaseRunDocument {
  if (event.type === 'RunFinished') return { ...run, status: event.data.status, distribution: storedDistribution(event.data.distribution) };
  const { trialId } = event.data;
  const trials = run.trials.map((trial) => (trial.id === trialId ? trialProgressed(trial, event) : trial));
  return { ...run, trials, distribution: computeDistribution(trials) };
}

function trialProgressed<T extends TrialTally>(trial: T, event: Recorded<Exclude<RunProgress, RunFinished>>): T {
  switch (event.type) {
    case 'TrialStarted':
      return { ...trial, status: 'running' };
    case 'TrialCommandRecorded':
      return { ...trial, commands: trial.commands + 1 };
    case 'TrialScored':
      return { ...trial, status: event.data.status };
    case 'TrialVoided':
      return { ...trial, status: 'void' };
  }
}

/** Records the runs a batch starts; a run already recorded at or after this event stays. */
export async function recordPlannedRuns(runs: Collection<CaseRunDocument>, organization: string, planned: PlannedRun[], position: number): Promise<void> {
  for (const run of planned) {
    await evolveGuarded(runs, run.runId, (stored) => (stored && stored._position >= position ? undefined : plannedRun(organization, run, position)));
  }
}

/**
 * The run as it is after the event, or null for a run no batch started. A redelivered event
 * finds the run already past it and returns it unchanged, so its case still gets the change.
 */
export async function recordProgress(runs: Collection<CaseRunDocument>, event: Recorded<RunProgress>): Promise<CaseRunDocument | null> {
  // Guarded by the position read (evolveGuarded): a lapsed owner's late write cannot undo a newer run.
  let after: CaseRunDocument | null = null;
  await evolveGuarded(runs, event.data.runId, (stored) => {
    after = stored;
    if (!stored || stored._position >= event.position) return undefined;
    after = { ...progressed(stored, event), _position: event.position };
    return after;
  });
  return after;
}
