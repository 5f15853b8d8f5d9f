import type { PlannedRun } from './batch.events';

/**
 * A run whose variant has the `local` sandbox is run by the local runner that started its
 * batch (runner.batches.start), never by the server's saga: the server leases its trials to
 * that runner and records what it reports.
 */
export function runByRunner(run: Pick<PlannedRun, 'variant'>): boolean {
  return run.variant.sandbox === 'local';
}
