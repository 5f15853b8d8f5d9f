import * as fs from 'node:fs';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { startBody } from '../support/evals';
import { INIT_KEY, startChild, tempDir, waitUntil } from '../support/servers';

const ABANDONED = 'abandoned: the instance running this trial stopped';

/**
 * A server stopping on SIGTERM records its trials as abandoned itself, even one held in a step
 * that does not heed the stop: once the grace is over it ends the trial through its claim, and
 * renews no lease after that. Before, such a trial was renewed for the whole grace and left for
 * the next instance to void.
 */
describe('evals: a stop records even a trial that does not stop as abandoned', () => {
  it('voids the held trial before the server exits, and renews its lease no more', async () => {
    const dataDir = tempDir();
    const pauses = tempDir('assay-pauses-');
    const server = await startChild(
      {
        ASSAY_DATA_DIR: dataDir,
        ASSAY_INIT_ORG: 'acme',
        ASSAY_INIT_API_KEY: INIT_KEY,
        ASSAY_TRIAL_LEASE_MS: '1500',
        ASSAY_TEST_PAUSE_AT: 'trial:after-claim',
        ASSAY_TEST_PAUSE_DIR: pauses,
      },
      { ownGroup: true },
    );
    try {
      const started = await server.client.call('evals.batches.start', startBody());
      expect(started.status).toBe(200);
      await waitUntil(async () => fs.existsSync(path.join(pauses, 'trial:after-claim.paused')), 20000);

      expect(await server.stop('SIGTERM')).toBe(0);
    } finally {
      await server.stop('SIGKILL');
    }

    const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
    try {
      const trial = db.prepare("SELECT type, data FROM events WHERE stream LIKE 'trial-%' ORDER BY position").all() as Array<{ type: string; data: string }>;
      const types = trial.map((event) => event.type);
      expect(types[0]).toBe('TrialQueued');
      expect(types[1]).toBe('TrialStarted');
      // Renewals during the grace, then the outcome, and nothing after it.
      expect(types.at(-1)).toBe('TrialVoided');
      expect(JSON.parse(trial.at(-1)!.data)).toMatchObject({ failure: ABANDONED });
      expect(types.slice(2, -1).every((type) => type === 'TrialLeaseRenewed')).toBe(true);
    } finally {
      db.close();
    }
  }, 40000);
});
