import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunnerApi, startLocalBatch } from '../../src/cli/local/local-runner';
import { parseExecutionConfig } from '#trial-runner';
import { startBody, waitForBatch } from '../support/evals';
import { localBody } from '../support/runner';
import { filesUnder, INIT_KEY, InProcessServer, startInProcess, TEST_CONSENT_CONFIG, waitUntil } from '../support/servers';
import { parse } from 'yaml';

const SECRET = 's3cr3t-local-value-123';
const SECRET_SHA = createHash('sha256').update(SECRET).digest('hex');
/** The test servers' consent (plain processes where bubblewrap is missing), for the runner on this machine too. */
const config = parseExecutionConfig(parse(fs.readFileSync(TEST_CONSENT_CONFIG, 'utf8')));

/** The local runner library, in this process, against a real server over HTTP. */
describe('local runs', () => {
  let server: InProcessServer;
  const answers: string[] = [];

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
  });
  afterAll(() => server.close());

  /** Every answer the runner got is kept, to search them for the local secret. */
  const api = (): RunnerApi => ({
    call: async (operation, body, headers) => {
      const answer = await server.client.call(operation, body, { headers });
      answers.push(answer.text);
      return { status: answer.status, body: answer.body };
    },
  });

  function run(body: Record<string, unknown>, extra: { env?: Record<string, string>; signal?: AbortSignal; concurrency?: number } = {}) {
    return startLocalBatch({
      api: api(),
      body,
      headers: { 'assay-trigger-source': 'cli' },
      concurrency: extra.concurrency ?? 2,
      env: extra.env ?? {},
      signal: extra.signal ?? new AbortController().signal,
      beatIntervalMs: 200,
      config,
    });
  }

  it('runs a local batch that reads back like a server one, flagged local', async () => {
    const cases = [
      { id: 'passes', variables: { word: 'hello' }, verify: 'grep -q hello out.txt' },
      { id: 'fails', variables: { word: 'bye' }, verify: 'grep -q bye out.txt' },
    ];
    const started = await run(localBody({ cases, trials: 2 }));
    expect(started.runs.map((r) => r.caseId)).toEqual(['passes', 'fails']);
    expect(await started.done).toEqual({ cancelled: false });
    const local = await waitForBatch(server.client, started.batchId);
    const remote = await waitForBatch(server.client, (await server.client.call('evals.batches.start', startBody({ cases, trials: 2 }))).body.id);

    expect(local).toMatchObject({ status: 'finished', local: true, failure: null, trigger: { source: 'cli' } });
    expect(remote.local).toBe(false);
    for (const [index, run] of local.runs.entries()) {
      const twin = remote.runs[index];
      expect(run.local).toBe(true);
      expect(run.trials.map((t: any) => t.status)).toEqual(twin.trials.map((t: any) => t.status));
      expect(run.distribution).toEqual(twin.distribution);
      expect(run.trials[0].verifySteps).toEqual(twin.trials[0].verifySteps);
      expect(run.trials[0].filesChanged).toEqual(twin.trials[0].filesChanged);
      expect(run.trials[0].trajectory.map((e: any) => [e._tag, e.command, e.exitCode])).toEqual(
        twin.trials[0].trajectory.map((e: any) => [e._tag, e.command, e.exitCode]),
      );
      expect(Object.keys(run.trials[0]).sort()).toEqual(Object.keys(twin.trials[0]).sort());
    }
    expect(local.runs[0].trials[0].artifacts.map((a: any) => a.path).sort()).toEqual(['out.txt', 'prompt.txt']);
    const viaRun = await server.client.call('evals.runs.get', { id: started.runs[0].id });
    expect(viaRun.body).toMatchObject({ local: true, status: 'finished' });
  });

  it("gives trials the user's values, redacts them from what it reports, and never sends them", async () => {
    const variants = [
      {
        harness: 'command',
        model: 'none',
        sandbox: 'local',
        // The run checks the value by its hash: the suite itself, which the server stores, never holds it.
        profile: {
          run: `echo "the value is $MY_LOCAL_SECRET"; test "$(printf %s "$MY_LOCAL_SECRET" | sha256sum | cut -c1-64)" = ${SECRET_SHA} && echo hello > out.txt`,
        },
      },
    ];
    const started = await run(localBody({ variants }), { env: { MY_LOCAL_SECRET: SECRET } });
    await started.done;
    const batch = await waitForBatch(server.client, started.batchId);
    const trial = batch.runs[0].trials[0];
    expect(trial.status).toBe('passed');
    const harness = trial.trajectory.find((e: any) => e._tag === 'command' && e.output.includes('the value is'));
    expect(harness.output).toContain('[redacted]');

    const reads = [
      await server.client.call('evals.batches.get', { id: started.batchId }),
      await server.client.call('evals.runs.get', { id: started.runs[0].id }),
      await server.client.call('evals.batches.list', {}),
      await server.client.call('evals.cases.list', {}),
      await server.client.call('evals.cases.get', { id: 'say-hello' }),
    ];
    for (const text of [...answers, ...reads.map((r) => r.text)]) expect(text).not.toContain(SECRET);
    const files = filesUnder(server.dataDir);
    expect(files.some((file) => file.endsWith('.sqlite') || file.includes('events'))).toBe(true);
    for (const file of files)
      expect([path.relative(server.dataDir, file), fs.readFileSync(file).includes(SECRET)]).toEqual([path.relative(server.dataDir, file), false]);
  });

  it('on abort, stops its running trials and finishes the batch as cancelled', async () => {
    const stop = new AbortController();
    const variants = [{ harness: 'command', model: 'none', sandbox: 'local', profile: { run: 'sleep 60' } }];
    const started = await run(localBody({ variants, trials: 3 }), { signal: stop.signal, concurrency: 1 });
    await waitUntil(async () => (await server.client.call('evals.runs.get', { id: started.runs[0].id })).body.trials[0].status === 'running', 20000);
    stop.abort();
    expect(await started.done).toEqual({ cancelled: true });
    const batch = await waitForBatch(server.client, started.batchId);
    expect(batch).toMatchObject({ status: 'failed', failure: 'cancelled' });
    expect(batch.runs[0].trials.map((t: any) => [t.status, t.failure])).toEqual([
      ['void', 'cancelled by the runner'],
      ['void', 'cancelled by the runner'],
      ['void', 'cancelled by the runner'],
    ]);
  });

  it('fails with a clear message when the server refuses the start', async () => {
    await expect(run(startBody())).rejects.toThrow(/runner.batches.start was refused \(400\).*sandbox "local"/);
  });
});
