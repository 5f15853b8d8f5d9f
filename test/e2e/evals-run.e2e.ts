import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { openKeyRing } from '#infrastructure/secrets/key-ring';
import { artifactPath } from '#trial-runner';
import { ApiClient } from '../support/http-client';
import { makeRepository, startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/** Batches run for real: child processes in the default sandbox (bubblewrap here), real git. */
describe('evals: batches run their trials', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  async function run(body: Record<string, unknown>, headers: Record<string, string> = {}) {
    const started = await api.call('evals.batches.start', body, { headers });
    expect(started.status).toBe(200);
    return { started: started.body, batch: await waitForBatch(api, started.body.id) };
  }

  it('answers the started batch at once, then scores a passing and a failing case', async () => {
    const body = startBody({
      cases: [
        { id: 'passes', variables: { word: 'hello' }, verify: 'grep -q hello out.txt' },
        { id: 'fails', variables: { word: 'bye' }, verify: 'grep -q bye out.txt' },
      ],
      trials: 2,
    });
    const { started, batch } = await run(body);
    expect(started).toEqual({
      id: expect.stringMatching(/^bat_/),
      runs: [
        { caseId: 'passes', id: expect.stringMatching(/^run_/), variantId: expect.stringMatching(/^var_/) },
        { caseId: 'fails', id: expect.stringMatching(/^run_/), variantId: expect.stringMatching(/^var_/) },
      ],
    });
    expect(batch.status).toBe('finished');
    const [passes, fails] = batch.runs;
    expect(passes.trials.map((t: any) => t.status)).toEqual(['passed', 'passed']);
    expect(fails.trials.map((t: any) => t.status)).toEqual(['failed', 'failed']);
    expect(passes.distribution).toMatchObject({ trials: 2, passed: 2, failed: 0, scored: 2, voided: 0, passRate: 1, deterministic: true });
    expect(fails.distribution).toMatchObject({ passRate: 0, scored: 2, failed: 2 });
    const trial = passes.trials[0];
    expect(trial).toMatchObject({ ordinal: 1, exitCode: 0, failure: null, voidFields: [], filesChanged: ['out.txt', 'prompt.txt'] });
    expect(trial.verifySteps).toEqual([{ command: 'grep -q hello out.txt', exitCode: 0 }]);
    expect(fails.trials[0].verifySteps).toEqual([{ command: 'grep -q bye out.txt', exitCode: 1 }]);
    expect(trial.commands).toBe(trial.trajectory.filter((entry: any) => entry._tag === 'command').length);
    expect(trial.trajectory.map((entry: any) => entry._tag)).toEqual(['message', 'command', 'message', 'conversation', 'command']);
    expect(passes.setup).toMatchObject({ prompt: 'Write hello into out.txt', source: { kind: 'empty' }, verify: 'grep -q hello out.txt' });
  });

  it('keeps the artifacts the agent changed, by sha256, in the data directory', async () => {
    const { batch } = await run(startBody());
    const trial = batch.runs[0].trials[0];
    const artifact = trial.artifacts.find((a: any) => a.path === 'out.txt');
    expect(artifact).toEqual({ path: 'out.txt', byteSize: 6, sha256: createHash('sha256').update('hello\n').digest('hex') });
    // Sealed under acme's data key: only the key ring opens it, and to the content the sha256 names.
    const stored = fs.readFileSync(artifactPath(server.dataDir, 'acme', artifact.sha256));
    expect(stored.includes('hello')).toBe(false);
    const opened = await openKeyRing(server.runtime).openFile({ kind: 'artifact', organization: 'acme', sha256: artifact.sha256 }, stored);
    expect(opened.toString('utf8')).toBe('hello\n');
  });

  it('materializes a files source', async () => {
    const body = startBody({
      cases: [{ id: 'files', variables: { word: 'x' }, source: { kind: 'files', files: { 'data/input.txt': 'abc' } }, verify: 'grep -q abc copy.txt' }],
      variants: [{ harness: 'command', model: 'm', profile: { run: 'cat data/input.txt > copy.txt' } }],
    });
    const { batch } = await run(body);
    expect(batch.runs[0].trials[0].status).toBe('passed');
  });

  it('clones a repo source at a tag', async () => {
    const repo = makeRepository();
    const body = startBody({
      cases: [
        {
          id: 'repo',
          variables: { word: 'x' },
          source: { kind: 'repo', url: repo.url, ref: 'v1' },
          verify: 'grep -q one version.txt && test "$(git rev-parse HEAD)" = ' + repo.firstCommit,
        },
      ],
      variants: [{ harness: 'command', model: 'm', profile: { run: 'cat version.txt' } }],
    });
    const { batch } = await run(body);
    expect(batch.runs[0].trials[0]).toMatchObject({ status: 'passed' });
  });

  it('runs profile.install before the harness', async () => {
    const body = startBody({
      variants: [{ harness: 'command', model: 'm', profile: { install: 'echo installed > tool.txt', run: 'cat tool.txt > out.txt' } }],
      cases: [{ id: 'install', variables: { word: 'x' }, verify: 'grep -q installed out.txt' }],
    });
    const { batch } = await run(body);
    expect(batch.runs[0].trials[0].status).toBe('passed');
  });

  it('scores a trial past its timeout failed: the agent was too slow, verify does not run', async () => {
    const body = startBody({
      cases: [{ id: 'slow', variables: { word: 'x' }, timeoutMs: 1000, verify: 'true' }],
      variants: [{ harness: 'command', model: 'm', profile: { run: 'sleep 30' } }],
    });
    const { batch } = await run(body);
    const trial = batch.runs[0].trials[0];
    const failure = 'the agent ran out of time: it was still running after 1000 ms';
    expect(trial).toMatchObject({ status: 'failed', failure, timed: true, voidFields: [], exitCode: null, verifySteps: [] });
    expect(batch.runs[0].status).toBe('finished');
    expect(batch.runs[0].distribution).toMatchObject({ voided: 0, scored: 1, failed: 1, passRate: 0 });
  });

  it('voids the trials of a harness kind with no driver configured', async () => {
    const body = startBody({ variants: [{ harness: 'harness_kind_2', model: 'some-model' }] });
    const { batch } = await run(body);
    expect(batch.runs[0].trials[0]).toMatchObject({ status: 'void', failure: 'harness_kind_2 has no driver configured on this server' });
  });

  it('runs a batch of exactly 100 trials to the end', async () => {
    const cases = Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, variables: { word: 'x' }, verify: 'true' }));
    const variants = [{ harness: 'command', model: 'm', profile: { run: 'true' } }];
    const { batch } = await run(startBody({ cases, variants, trials: 10 }));
    expect(batch.status).toBe('finished');
    expect(batch.runs.flatMap((r: any) => r.trials).filter((t: any) => t.status === 'passed')).toHaveLength(100);
  });

  it('records case versions only when the definition changes, naming what changed', async () => {
    const versions = async () =>
      (await server.runtime.eventStore.readStream('case-acme.versioned')).filter((e) => e.type === 'CaseVersionAppended').map((e) => e.data as any);
    const base = { id: 'versioned', variables: { word: 'one' }, verify: 'true' };
    await run(startBody({ cases: [base] }));
    await run(startBody({ cases: [base] }));
    expect(await versions()).toHaveLength(1);
    expect((await versions())[0]).toMatchObject({
      changes: [],
      author: 'initial key (ASSAY_INIT_API_KEY)',
      definitionHash: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    await run(startBody({ cases: [{ ...base, variables: { word: 'two' }, verify: 'test 1 = 1' }] }));
    const all = await versions();
    expect(all).toHaveLength(2);
    expect(all[1].changes).toEqual(['prompt', 'verifier']);
    expect(all[1].definitionHash).not.toBe(all[0].definitionHash);
  });

  it('reuses a variant id for the same case and combination, and a named profile keeps its variant', async () => {
    const named = (run: string) => ({ harness: 'command', model: 'm', profile: { name: 'p1', run } });
    const first = await run(startBody({ variants: [named('echo hello > out.txt')] }));
    const second = await run(startBody({ variants: [named('echo hello >> out.txt')] }));
    expect(second.started.runs[0].variantId).toBe(first.started.runs[0].variantId);
    expect(second.batch.runs[0].profileVersion).not.toBe(first.batch.runs[0].profileVersion);
    const other = await run(startBody({ variants: [{ harness: 'command', model: 'other', profile: { name: 'p1', run: 'echo hello > out.txt' } }] }));
    expect(other.started.runs[0].variantId).not.toBe(first.started.runs[0].variantId);
  });

  it('evals.cases.run runs the newest version on every variant, or on the chosen ones', async () => {
    const variants = [
      { harness: 'command', model: 'a', profile: { run: 'echo hello > out.txt' } },
      { harness: 'command', model: 'b', profile: { run: 'echo hello > out.txt' } },
    ];
    const first = await run(startBody({ cases: [{ id: 'rerun', variables: { word: 'x' }, verify: 'grep -q hello out.txt' }], variants }));
    const ids = first.started.runs.map((r: any) => r.variantId);
    const all = await api.call('evals.cases.run', { id: 'rerun', trials: 2 });
    expect(all.status).toBe(200);
    expect(all.body.runs.map((r: any) => r.variantId).sort()).toEqual([...ids].sort());
    const allBatch = await waitForBatch(api, all.body.id);
    expect(allBatch.runs.every((r: any) => r.trials.length === 2 && r.distribution.passed === 2)).toBe(true);
    const chosen = await api.call('evals.cases.run', { id: 'rerun', variants: [ids[1]] });
    expect(chosen.body.runs).toEqual([{ caseId: 'rerun', id: expect.any(String), variantId: ids[1] }]);
    await waitForBatch(api, chosen.body.id);
    expect((await api.call('evals.cases.run', { id: 'rerun', variants: ['var_nope'] })).status).toBe(400);
    expect((await api.call('evals.cases.run', { id: 'no-such-case' })).status).toBe(404);
    for (const body of [
      { id: 'rerun', trials: 11 },
      { id: 'rerun', trials: 0 },
      { id: 'rerun', variants: [] },
      { id: 'rerun', extra: 1 },
    ]) {
      const refused = await api.call('evals.cases.run', body);
      expect({ status: refused.status, tag: refused.body._tag }).toEqual({ status: 400, tag: 'HttpApiDecodeError' });
    }
  });

  it('answers the original batch to a repeated idempotency key, and 400 to another body', async () => {
    const headers = { 'idempotency-key': 'start-42' };
    const first = await api.call('evals.batches.start', startBody(), { headers });
    const again = await api.call('evals.batches.start', startBody(), { headers });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const other = await api.call('evals.batches.start', startBody({ trials: 2 }), { headers });
    expect(other.status).toBe(400);
    expect(other.body.message).toContain('idempotency-key');
    await waitForBatch(api, first.body.id);
    const batches = (await server.runtime.eventStore.readAll()).filter((e) => e.type === 'BatchStarted' && (e.data as any).idempotencyKey === 'start-42');
    expect(batches).toHaveLength(1);
    const unkeyed = await api.call('evals.batches.start', startBody());
    expect(unkeyed.body.id).not.toBe(first.body.id);
    await waitForBatch(api, unkeyed.body.id);
  });

  it("answers 404 for another organization's batch and an unknown one", async () => {
    expect((await api.call('evals.batches.get', { id: 'bat_nope' })).status).toBe(404);
    expect((await api.call('evals.runs.get', { id: 'run_nope' })).status).toBe(404);
  });
});
