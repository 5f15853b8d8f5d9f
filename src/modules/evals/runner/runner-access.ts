import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { Conflict, NotFound } from '#shared/errors';
import { loadRunnerBatch, RunnerBatch } from './runner-batch';

/**
 * The batch a runner operation names, as stored: another organization's batch is unknown
 * (404, as every read answers it); a batch the server runs is no runner's (409: the request is
 * well-formed, the batch cannot take it). With `open`, a batch whose runner finished, went
 * silent or whose end is recorded takes no more leases, reports or beats (409).
 */
export async function runnerBatch(eventStore: EventStore, batchId: string, organization: string, open: boolean): Promise<RunnerBatch> {
  const batch = await loadRunnerBatch(eventStore, batchId);
  if (!batch || batch.started.organization !== organization) throw new NotFound(`No batch "${batchId}" in this organization.`);
  if (!batch.local) {
    throw new Conflict(`Batch "${batchId}" was started with evals.batches.start: the server runs its trials, so it takes no runner operations.`);
  }
  if (open && batch.runner === 'silenced') {
    throw new Conflict(`Batch "${batchId}" failed: its runner stopped checking in, and its unreported trials were voided. Start a new batch.`);
  }
  if (open && (batch.runner === 'finished' || batch.ended)) {
    throw new Conflict(`Batch "${batchId}" is finished: it takes no more leases, reports or beats.`);
  }
  return batch;
}
