import { Collection, findToRead, ReadStore } from '#infrastructure/read-store/read-store.port';
import { Recorded, typedDocumentProjection } from '../../typed-projection';
import type { TrajectoryEntry } from '#trial-runner';
import type { ValidationRecord } from '#trial-runner';
import type {
  TrialCommandRecorded,
  TrialConversationEnded,
  TrialMessageRecorded,
  TrialModelCalled,
  TrialPrepared,
  TrialToolCalled,
  TrialValidated,
  TrialVerified,
} from '../trials/trial.events';
import type { TrialDetail } from './trial-view';

export const TRIAL_DETAILS = 'eval_trial_details';

type TrialDetailEvent =
  TrialCommandRecorded | TrialMessageRecorded | TrialConversationEnded | TrialPrepared | TrialModelCalled | TrialToolCalled | TrialVerified | TrialValidated;

type Step =
  | { kind: 'trajectory'; entry: TrajectoryEntry }
  | { kind: 'verify'; step: { command: string; exitCode: number } }
  | { kind: 'validation'; validation: ValidationRecord };

/**
 * One recorded step of a trial: a trajectory entry, a verify step or a validation. A document per
 * step (not per trial, not inside the run) keeps every document as small as the event it came
 * from, so no trial, however long, nears MongoDB's 16 MiB document limit.
 */
export type TrialDetailDocument = {
  _id: string;
  organization: string;
  batchId: string;
  runId: string;
  trialId: string;
  /** The event's position in the log: the steps' order. */
  position: number;
  step: Step;
};

function stepOf(event: Recorded<TrialDetailEvent>): Step {
  switch (event.type) {
    case 'TrialVerified':
      return { kind: 'verify', step: { command: event.data.command, exitCode: event.data.exitCode } };
    case 'TrialValidated':
      return { kind: 'validation', validation: event.data.validation };
    default:
      return { kind: 'trajectory', entry: event.data.entry };
  }
}

export const trialDetailProjection = typedDocumentProjection<TrialDetailEvent, TrialDetailDocument>({
  name: 'eval-trial-details',
  collection: TRIAL_DETAILS,
  indexes: [{ keys: { organization: 1, runId: 1, position: 1 } }],
  eventTypes: [
    'TrialCommandRecorded',
    'TrialMessageRecorded',
    'TrialConversationEnded',
    'TrialPrepared',
    'TrialModelCalled',
    'TrialToolCalled',
    'TrialVerified',
    'TrialValidated',
  ],
  // The event's id: stable across replays, one document per step.
  documentId: (event) => event.id,
  evolve(document, event, id) {
    if (document) return document;
    const { organization, batchId, runId, trialId } = event.data;
    return { _id: id, organization, batchId, runId, trialId, position: event.position, step: stepOf(event) };
  },
});

/** The detail of every trial of the runs, by trial id, steps in the order they were recorded. */
export async function trialDetails(readStore: ReadStore, organization: string, runIds: string[]): Promise<Map<string, TrialDetail>> {
  const details = new Map<string, TrialDetail>();
  if (runIds.length === 0) return details;
  const steps: Collection<TrialDetailDocument> = readStore.collection<TrialDetailDocument>(TRIAL_DETAILS);
  // Read only (the steps go into the answer as they are): the memory store hands its own, frozen.
  const documents = await findToRead(steps, { organization, runId: { $in: runIds } }, { sort: { position: 1 } });
  for (const { trialId, step } of documents) {
    let detail = details.get(trialId);
    if (!detail) details.set(trialId, (detail = { trajectory: [], verifySteps: [], validations: [] }));
    if (step.kind === 'trajectory') detail.trajectory.push(step.entry);
    else if (step.kind === 'verify') detail.verifySteps.push(step.step);
    else detail.validations.push(step.validation);
  }
  return details;
}
