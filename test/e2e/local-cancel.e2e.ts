import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunnerApi, startLocalBatch } from '../../src/cli/local/local-runner';
import { parseExecutionConfig } from '#trial-runner';
import { bubblewrapAbsent } from '../support/bubblewrap';
import { waitForBatch } from '../support/evals';
import { localBody } from '../support/runner';
import { CLI, INIT_KEY, InProcessServer, startInProcess, tempDir, waitUntil } from '../support/servers';
import { processesWith } from '../support/processes';

/** The drivers a local trial can run under here: the process driver always (forced by defaultSandbox), bubblewrap where it works. */
const drivers = bubblewrapAbsent === null ? (['process', 'bubblewrap'] as const) : (['process'] as const);
const cancelled = ['void', 'cancelled by the runner'];

/**
 * Ctrl-C in local mode: the running trials are killed with everything they started, whichever
 * sandbox driver runs them, and the batch ends failed, "cancelled".
 */
describe('a cancelled local batch', () => {
  let server: InProcessServer;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    await server.close();
  });

  const api = (): RunnerApi => ({
    call: async (operation, body, headers) => {
      const answer = await server.client.call(operation, body, { headers });
      return { status: answer.status, body: answer.body };
    },
  });
  const trialsOf = async (runId: string) => (await server.client.call('evals.runs.get', { id: runId })).body.trials;

  it.each(drivers)('under the %s driver, stops its running trial at once and ends failed, "cancelled"', async (driver) => {
    const marker = `47.${driver.length}1828`;
    const stop = new AbortController();
    const config = parseExecutionConfig({ allowUnsandboxed: true, defaultSandbox: driver }, 'test config');
    const variants = [{ harness: 'command', model: 'none', sandbox: 'local', profile: { run: `sleep ${marker} & sleep ${marker}` } }];
    const started = await startLocalBatch({
      api: api(),
      body: localBody({ variants, trials: 3 }),
      headers: {},
      concurrency: 1,
      env: {},
      signal: stop.signal,
      beatIntervalMs: 200,
      config,
    });
    await waitUntil(async () => (await trialsOf(started.runs[0].id))[0].status === 'running', 20000);
    await waitUntil(async () => processesWith(marker).length > 0, 20000);
    const stoppedAt = Date.now();
    stop.abort();
    expect(await started.done).toEqual({ cancelled: true });
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(processesWith(marker)).toEqual([]);
    const batch = await waitForBatch(server.client, started.batchId);
    expect(batch).toMatchObject({ status: 'failed', failure: 'cancelled', local: true });
    expect(batch.runs[0].trials.map((t: any) => [t.status, t.failure])).toEqual([cancelled, cancelled, cancelled]);
  });

  it('under the process driver, stops a trial whose command had not started yet', async () => {
    const stop = new AbortController();
    const config = parseExecutionConfig({ allowUnsandboxed: true, defaultSandbox: 'process' }, 'test config');
    const variants = [{ harness: 'command', model: 'none', sandbox: 'local', profile: { run: 'sleep 58.1828' } }];
    const started = await startLocalBatch({
      api: api(),
      body: localBody({ variants, trials: 1 }),
      headers: {},
      concurrency: 1,
      env: {},
      signal: stop.signal,
      beatIntervalMs: 200,
      config,
      log: (line) => {
        if (line.includes('started')) stop.abort();
      },
    });
    const stoppedAt = Date.now();
    expect(await started.done).toEqual({ cancelled: true });
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(processesWith('58.1828')).toEqual([]);
    expect(await waitForBatch(server.client, started.batchId)).toMatchObject({ status: 'failed', failure: 'cancelled' });
  });

  it('through the CLI without bubblewrap: Ctrl-C exits 130 at once and the batch reads failed, "cancelled"', async () => {
    const dir = tempDir('assay-cancel-cli-');
    const config = path.join(dir, 'assay.yaml');
    fs.writeFileSync(config, 'allowUnsandboxed: true\ndefaultSandbox: process\n');
    const suite = path.join(dir, 'suite.yaml');
    fs.writeFileSync(
      suite,
      [
        'name: cancel-me',
        'suite: { id: cancel-me, prompt: "Wait" }',
        'cases:',
        '  - { id: waits, verify: "true" }',
        'variants:',
        '  - { harness: command, model: none, sandbox: local, profile: { run: "sleep 59.1828" } }',
        'trials: 2',
        '',
      ].join('\n'),
    );
    const env = { PATH: process.env.PATH ?? '', ASSAY_URL: server.url, ASSAY_API_KEY: INIT_KEY, ASSAY_CONFIG: config, TMPDIR: tempDir('assay-cli-tmp-') };
    const child = spawn(process.execPath, [CLI, 'eval', suite, '--no-progress'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitUntil(async () => processesWith('59.1828').length > 0, 30000);
    const batchId = /batch (bat_[a-z0-9]+)/.exec(stdout)?.[1];
    const stoppedAt = Date.now();
    child.kill('SIGINT');
    expect(await closed).toBe(130);
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
    expect(processesWith('59.1828')).toEqual([]);
    expect(stderr).toContain(`Interrupted: batch ${batchId}`);
    const batch = await waitForBatch(server.client, batchId!);
    expect(batch).toMatchObject({ status: 'failed', failure: 'cancelled' });
    expect(batch.runs[0].trials.map((t: any) => [t.status, t.failure])).toEqual([cancelled, cancelled]);
  });
});
