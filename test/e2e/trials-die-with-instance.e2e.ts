import * as fs from 'node:fs';
import * as path from 'node:path';
import { bubblewrapAbsent } from '../support/bubblewrap';
import { startBody, waitForBatch } from '../support/evals';
import { ChildServer, INIT_KEY, startChild, tempDir, waitUntil } from '../support/servers';

const ABANDONED = 'abandoned: the instance running this trial stopped';
const CONFIG = `allowUnsandboxed: true
sandboxes:
  sandbox_kind_1: { driver: process }
  sandbox_kind_2: { driver: bubblewrap }
`;

/** Processes whose command line holds `marker`, by pid (read from /proc). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker)) found.push(Number(name));
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

/** The `sleep MARKER` processes themselves (not the shells that started them). */
function sleepers(marker: string): number[] {
  return processesWith(`sleep\u0000${marker}\u0000`);
}

/** The guardian of the server `serverPid`: the process guardian whose parent it is. */
function guardianOf(serverPid: number): number {
  const guardian = processesWith('process-guardian.js').find((pid) => {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === serverPid;
  });
  if (guardian === undefined) throw new Error(`no process guardian of server ${serverPid}`);
  return guardian;
}

const sandboxes: Array<[string, string]> = [['process', 'sandbox_kind_1']];
if (bubblewrapAbsent === null) sandboxes.push(['bubblewrap', 'sandbox_kind_2']);
else process.stderr.write(`[skip] the bubblewrap cases of trials-die-with-instance: ${bubblewrapAbsent}\n`);

/**
 * A server killed with its whole process group (as a supervisor or the out-of-memory killer ends
 * it, spawn helper included) must take its trials with it: a trial voided as abandoned must not
 * keep running, spending and writing, after its verdict.
 */
describe.each(sandboxes)('trials under %s die with their instance', (_name, sandbox) => {
  let server: ChildServer | null = null;
  let env: Record<string, string>;

  beforeEach(() => {
    const config = path.join(tempDir(), 'assay.yaml');
    fs.writeFileSync(config, CONFIG);
    env = {
      ASSAY_DATA_DIR: tempDir(),
      ASSAY_INIT_ORG: 'acme',
      ASSAY_INIT_API_KEY: INIT_KEY,
      ASSAY_CONFIG: config,
      ASSAY_INSTANCE_ID: 'the-only-one',
      ASSAY_MAX_PARALLEL_TRIALS: '2',
      // One temporary directory for both servers: the second finds the first's trials directory there.
      TMPDIR: tempDir('assay-tmp-'),
    };
  });

  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = null;
  });

  /** Starts a batch of two trials that each leave a sleeping child behind a shell, and waits until both sleep. */
  async function twoSleepingTrials(marker: string): Promise<string> {
    server = await startChild(env, { ownGroup: true });
    // A shell that waits on a child: the child is not the group leader, and would outlive a leader-only kill.
    const run = `sleep ${marker} & wait`;
    const body = startBody({ variants: [{ harness: 'command', model: 'm', sandbox, profile: { run } }], trials: 2 });
    const started = await server.client.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    await waitUntil(async () => sleepers(marker).length === 2, 20000);
    return started.body.id;
  }

  async function restartAndFinish(batchId: string): Promise<void> {
    server = await startChild(env, { ownGroup: true });
    const batch = await waitForBatch(server.client, batchId, 30000);
    expect(batch.status).toBe('finished');
    expect(batch.runs[0].trials.map((trial: any) => [trial.status, trial.failure])).toEqual([
      ['void', ABANDONED],
      ['void', ABANDONED],
    ]);
  }

  it('SIGKILL of the server process group: no trial process is alive a second later', async () => {
    const marker = '61.25';
    const batchId = await twoSleepingTrials(marker);

    expect(await server!.stop('SIGKILL')).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 1000));

    expect(sleepers(marker)).toEqual([]);
    await restartAndFinish(batchId);
  });

  it('when its guardian was killed too, the next instance kills what is left before it runs', async () => {
    const marker = '62.75';
    const batchId = await twoSleepingTrials(marker);
    const guardian = guardianOf(server!.child.pid!);

    process.kill(guardian, 'SIGKILL');
    expect(await server!.stop('SIGKILL')).toBeNull();
    // With the guardian gone too, a process-sandbox trial's child is left running (bubblewrap's die with their parent).
    if (sandbox === 'sandbox_kind_1') expect(sleepers(marker)).toHaveLength(2);

    server = null;
    await restartAndFinish(batchId);
    expect(sleepers(marker)).toEqual([]);
  });
});
