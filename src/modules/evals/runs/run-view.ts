import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import type { RunDocument } from './run.projection';
import { trialDetails } from './trial-detail.projection';
import { TrialDetail, trialView } from './trial-view';

/** The run as the API shows it: the document without its bookkeeping fields, its trials joined with their detail. */
export function runView(document: Readonly<RunDocument>, details: ReadonlyMap<string, TrialDetail>) {
  const {
    _id,
    organization: _organization,
    startedAtMillis: _millis,
    tags: _tags,
    _position,
    trials,
    ...fields
  } = document as RunDocument & { _position?: number };
  const { trigger, ...before } = fields;
  return { id: _id, ...before, trials: trials.map((trial) => trialView(trial, details.get(trial.id))), trigger };
}

export type RunView = ReturnType<typeof runView>;

/** The views of run documents of one organization, with one read of their trials' detail. */
export async function runViews(readStore: ReadStore, organization: string, documents: ReadonlyArray<Readonly<RunDocument>>): Promise<RunView[]> {
  const details = await trialDetails(
    readStore,
    organization,
    documents.map((run) => run._id),
  );
  return documents.map((run) => runView(run, details));
}
