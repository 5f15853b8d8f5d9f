import type { RecordedEvent } from '#infrastructure/event-store/event-store.port';

/** One Server-Sent Event of a batch's progress: `id` is the event's position in the log. */
export interface ProgressEvent {
  id: number;
  name: ProgressEventName;
  data: Record<string, unknown>;
}

export type ProgressEventName = 'batch.started' | 'trial.started' | 'turn.ended' | 'trial.scored' | 'trial.voided' | 'run.finished' | 'batch.finished';

/** The stored event types a watch reads; every other event of the log passes it by. */
export const WATCHED_EVENT_TYPES = new Set([
  'BatchStarted',
  'TrialStarted',
  'TrialMessageRecorded',
  'TrialScored',
  'TrialVoided',
  'RunFinished',
  'BatchFinished',
  'BatchFailed',
]);

type Data = Record<string, unknown>;

/**
 * What a stored event of the batch tells a watcher, or null when it tells nothing (another
 * batch's event, a user's message, a command). Pure: the stream is this function over the log.
 */
export function progressOf(event: RecordedEvent, batchId: string): ProgressEvent | null {
  if (!WATCHED_EVENT_TYPES.has(event.type)) return null;
  const data = event.data as Data;
  if (data.batchId !== batchId) return null;
  const progress = (name: ProgressEventName, fields: Data): ProgressEvent => ({ id: event.position, name, data: { batchId, ...fields } });
  const trial = { runId: data.runId, trialId: data.trialId };
  switch (event.type) {
    case 'BatchStarted':
      return progress('batch.started', { startedAt: data.startedAt, runs: (data.runs as unknown[]).length, trials: plannedTrials(data) });
    case 'TrialStarted':
      return progress('trial.started', { ...trial, startedAt: data.startedAt });
    case 'TrialMessageRecorded':
      return agentTurn(data, progress);
    case 'TrialScored':
      return progress('trial.scored', { ...trial, status: data.status, failure: data.failure ?? null, timed: data.timed, exitCode: data.exitCode });
    case 'TrialVoided':
      return progress('trial.voided', { ...trial, status: 'void', failure: data.failure, voidFields: data.voidFields });
    case 'RunFinished':
      return progress('run.finished', { runId: data.runId, status: data.status, failure: data.failure, distribution: data.distribution });
    default:
      return progress('batch.finished', {
        status: event.type === 'BatchFailed' ? 'failed' : 'finished',
        failure: data.failure ?? null,
        finishedAt: data.finishedAt,
      });
  }
}

/** A turn ended when the agent's message of it was recorded; the user's messages are not progress. */
function agentTurn(data: Data, progress: (name: ProgressEventName, fields: Data) => ProgressEvent): ProgressEvent | null {
  const entry = data.entry as { role: string; turn: number; text: string; at: number };
  if (entry.role !== 'agent') return null;
  return progress('turn.ended', { runId: data.runId, trialId: data.trialId, turn: entry.turn, text: entry.text, at: entry.at });
}

function plannedTrials(data: Data): number {
  return (data.runs as Array<{ trialIds: string[] }>).reduce((total, run) => total + run.trialIds.length, 0);
}

/** True for the event after which the stream closes. */
export function endsTheBatch(progress: ProgressEvent): boolean {
  return progress.name === 'batch.finished';
}

/** The event in the text/event-stream format: one `data:` line (JSON has no raw newline). */
export function serialize(progress: ProgressEvent): string {
  return `id: ${progress.id}\nevent: ${progress.name}\ndata: ${JSON.stringify(progress.data)}\n\n`;
}
