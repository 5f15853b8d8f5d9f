import { startBody, waitForBatch } from '../support/evals';
import type { ApiClient } from '../support/http-client';
import { localBody, passedResult } from '../support/runner';
import { INIT_KEY, InProcessServer, keyFor, startInProcess, waitUntil } from '../support/servers';

/** The runner operations over real HTTP, driven by hand as a local runner would. */
describe('runner endpoints', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_OUTPUT_CAP: '1024' });
    api = server.client;
  });
  afterAll(() => server.close());

  async function startLocal(body: Record<string, unknown> = localBody()): Promise<any> {
    const started = await api.call('runner.batches.start', body);
    expect(started.status).toBe(200);
    return started.body;
  }

  /** Leases until `count` trials are out (the saga queues them just after the start). */
  async function lease(batchId: string, count = 1): Promise<any[]> {
    const trials: any[] = [];
    await waitUntil(async () => {
      const answer = await api.call('runner.trials.lease', { id: batchId, max: count - trials.length });
      expect(answer.status).toBe(200);
      trials.push(...answer.body.trials);
      return trials.length >= count;
    }, 10000);
    return trials;
  }

  async function finish(batchId: string, cancelled = true): Promise<void> {
    expect((await api.call('runner.batches.finish', { id: batchId, cancelled })).status).toBe(200);
  }

  it('starts a local batch, leases its trial without the organization environment, and records its report as a server trial', async () => {
    expect((await api.call('environment.set', { variables: [{ name: 'ORG_TOKEN', value: 'org-secret-value-42', secret: true }] })).status).toBe(200);
    const body = localBody({
      variants: [{ harness: 'command', model: 'none', sandbox: 'local', profile: { run: 'echo hello > out.txt', env: { GREETING: 'hi' } } }],
    });
    const started = await startLocal(body);
    const [trial] = await lease(started.id);
    expect(trial).toMatchObject({ id: expect.stringMatching(/^trl_/), runId: started.runs[0].id, caseId: 'say-hello', ordinal: 1 });
    expect(trial.lease).toEqual({ id: expect.stringMatching(/^lse_/), expiresAt: expect.any(String) });
    expect(trial.spec).toMatchObject({
      trialId: trial.id,
      sandbox: 'local',
      env: { GREETING: 'hi' },
      secrets: [],
      providerKeys: {},
      verify: 'grep -q hello out.txt',
    });
    expect(JSON.stringify(trial)).not.toContain('org-secret-value-42');
    expect((await api.call('evals.runs.get', { id: trial.runId })).body.trials[0].status).toBe('running');

    const reported = await api.call('runner.trials.report', { id: started.id, trialId: trial.id, lease: trial.lease.id, result: passedResult() });
    expect(reported.status).toBe(200);
    expect(reported.body).toEqual({ id: trial.id, status: 'passed' });
    const batch = await waitForBatch(api, started.id);
    expect(batch).toMatchObject({ status: 'finished', local: true, failure: null });
    const run = batch.runs[0];
    expect(run).toMatchObject({ local: true, status: 'finished', distribution: { trials: 1, passed: 1, scored: 1, voided: 0, passRate: 1 } });
    expect(run.trials[0]).toMatchObject({
      status: 'passed',
      commands: 1,
      verifySteps: [{ command: 'grep -q hello out.txt', exitCode: 0 }],
      filesChanged: ['out.txt'],
    });
    expect(run.trials[0].trajectory[0]).toMatchObject({ _tag: 'command', command: 'echo hello > out.txt', exitCode: 0 });
    expect((await api.call('evals.runs.get', { id: run.id })).body.local).toBe(true);
    const list = await api.call('evals.batches.list', {});
    expect(list.body.batches.find((b: any) => b.id === started.id)).toMatchObject({ status: 'finished', passed: 1 });

    const again = await api.call('runner.trials.report', { id: started.id, trialId: trial.id, lease: trial.lease.id, result: passedResult() });
    expect(again.status).toBe(409);
    expect((await api.call('runner.trials.lease', { id: started.id })).status).toBe(409);
    expect((await api.call('runner.beat', { id: started.id })).status).toBe(409);
    // The runner's finish after its last report is fine (the batch ended as it reported).
    expect((await api.call('runner.batches.finish', { id: started.id })).body).toEqual({ id: started.id, cancelled: false, voided: 0 });
  });

  it('keeps the start rules: local variants only through the runner, and a runner batch needs one', async () => {
    expect((await api.call('evals.batches.start', localBody())).status).toBe(400);
    const none = await api.call('runner.batches.start', startBody());
    expect(none.status).toBe(400);
    expect(none.body.message).toContain('sandbox "local"');
  });

  it('bounds how many trials one lease asks for: 1 to 50, both sides', async () => {
    const started = await startLocal();
    for (const max of [0, 51, 1.5]) {
      const refused = await api.call('runner.trials.lease', { id: started.id, max });
      expect([max, refused.status, refused.body._tag]).toEqual([max, 400, 'HttpApiDecodeError']);
    }
    for (const max of [50, 1]) expect([max, (await api.call('runner.trials.lease', { id: started.id, max })).status]).toEqual([max, 200]);
    await finish(started.id);
  });

  it("refuses a report for a lease that is not the trial's, and a trial the batch does not have", async () => {
    const started = await startLocal(localBody({ trials: 2 }));
    const [first, second] = await lease(started.id, 2);
    const other = await api.call('runner.trials.report', { id: started.id, trialId: first.id, lease: second.lease.id, result: passedResult() });
    expect(other.status).toBe(409);
    expect(other.body.message).toContain('not the current lease');
    const missing = await api.call('runner.trials.report', { id: started.id, trialId: 'trl_unknown', lease: first.lease.id, result: passedResult() });
    expect(missing.status).toBe(404);
    const beat = await api.call('runner.beat', { id: started.id });
    expect(beat.status).toBe(200);
    expect(beat.body.leases.map((l: any) => l.trialId).sort()).toEqual([first.id, second.id].sort());
    await finish(started.id);
  });

  it("answers 404 for another organization's batch on every runner operation, and 409 for a server batch", async () => {
    const started = await startLocal();
    const [trial] = await lease(started.id);
    const other = await keyFor(server, 'globex', ['evals:read', 'evals:write']);
    const bodies: Array<[string, unknown]> = [
      ['runner.trials.lease', { id: started.id }],
      ['runner.trials.report', { id: started.id, trialId: trial.id, lease: trial.lease.id, result: passedResult() }],
      ['runner.beat', { id: started.id }],
      ['runner.batches.finish', { id: started.id }],
    ];
    for (const [operation, body] of bodies) {
      const answer = await other.call(operation, body);
      expect([operation, answer.status, answer.body._tag]).toEqual([operation, 404, 'NotFound']);
    }
    const readOnly = await keyFor(server, 'acme', ['evals:read']);
    expect((await readOnly.call('runner.beat', { id: started.id })).status).toBe(403);
    await finish(started.id);

    const serverBatch = (await api.call('evals.batches.start', startBody())).body;
    for (const [operation] of bodies) {
      const body =
        operation === 'runner.trials.report' ? { id: serverBatch.id, trialId: trial.id, lease: 'x', result: passedResult() } : { id: serverBatch.id };
      expect([operation, (await api.call(operation, body)).status]).toEqual([operation, 409]);
    }
    await waitForBatch(api, serverBatch.id);
  });

  it('finishes as cancelled: unreported trials void, the batch failed ("cancelled") and its slot free', async () => {
    const started = await startLocal(localBody({ trials: 3 }));
    const [leased] = await lease(started.id);
    expect((await api.call('runner.trials.report', { id: started.id, trialId: leased.id, lease: leased.lease.id, result: passedResult() })).status).toBe(200);
    const finished = await api.call('runner.batches.finish', { id: started.id, cancelled: true });
    expect(finished.body).toEqual({ id: started.id, cancelled: true, voided: 2 });
    expect((await api.call('runner.batches.finish', { id: started.id, cancelled: true })).body).toEqual({ id: started.id, cancelled: true, voided: 0 });
    const batch = await waitForBatch(api, started.id);
    expect(batch).toMatchObject({ status: 'failed', failure: 'cancelled' });
    const trials = batch.runs[0].trials;
    expect(trials.map((t: any) => t.status)).toEqual(['passed', 'void', 'void']);
    expect(trials[1].failure).toBe('cancelled by the runner');
    expect(batch.runs[0].distribution).toMatchObject({ passed: 1, voided: 2, scored: 1 });
  });

  it('holds local batches to the rule of three, whatever starts the fourth', async () => {
    const held = [await startLocal(), await startLocal(), await startLocal()];
    const local = await api.call('runner.batches.start', localBody());
    expect(local.status).toBe(409);
    expect((await api.call('evals.batches.start', startBody())).status).toBe(409);
    // A keyed start is refused alike; its key is released, so a later start with it goes through.
    const keyed = await api.call('runner.batches.start', localBody(), { headers: { 'idempotency-key': 'k-1' } });
    expect(keyed.status).toBe(409);
    for (const batch of held) await finish(batch.id);
    const first = await api.call('runner.batches.start', localBody(), { headers: { 'idempotency-key': 'k-1' } });
    expect(first.status).toBe(200);
    const retry = await api.call('runner.batches.start', localBody(), { headers: { 'idempotency-key': 'k-1' } });
    expect(retry.body).toEqual(first.body);
    await finish(first.body.id);
  });

  /** The simulated user's model use, as the trial runner reports it. */
  const userModel = (overrides: Record<string, unknown> = {}) => ({
    provider: 'openai',
    model: 'gpt-4o-mini',
    calls: 2,
    inputTokens: 120,
    outputTokens: 30,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    totalTokens: 150,
    usd: 0.0012,
    ...overrides,
  });

  describe("a report is untrusted input, bounded as the server's own results", () => {
    const report = (result: Record<string, unknown>) => api.call('runner.trials.report', { id: 'bat_x', trialId: 'trl_x', lease: 'lse_x', result });
    const command = (output: string) => ({
      _tag: 'command',
      command: 'c',
      exitCode: 0,
      startedAtMillis: 1,
      finishedAtMillis: 2,
      output,
      outputTruncated: false,
    });
    const bound = 1024 + 256;

    it.each([
      ['1001 trajectory entries', { trajectory: Array.from({ length: 1001 }, () => command('')) }],
      ['an output past the cap', { trajectory: [command('x'.repeat(bound + 1))] }],
      ['a message past the cap', { trajectory: [{ _tag: 'message', role: 'agent', turn: 1, text: 'é'.repeat(bound / 2 + 1), at: 1 }] }],
      ['a failure of 241 characters', { status: 'failed', failure: 'f'.repeat(241) }],
      ['an exit code of 256', { exitCode: 256 }],
      ['a negative exit code', { exitCode: -1 }],
      ['negative modelMs', { modelMs: -1 }],
      ['an unknown field', { extra: true }],
      ['an unknown entry kind', { trajectory: [{ _tag: 'shell' }] }],
      ['a bad sha256', { artifacts: [{ path: 'a', byteSize: 1, sha256: 'xyz' }] }],
      ['an artifact of 0 bytes', { artifacts: [{ path: 'a', byteSize: 0, sha256: '0'.repeat(64) }] }],
      ['a bad status', { status: 'skipped' }],
      ['a conversation of 1001 turns', { conversation: { turns: 1001, endReason: 'user-done' } }],
      ['an unknown end reason', { conversation: { turns: 1, endReason: 'bored' } }],
      ["a user model's 10001 calls", { userModel: userModel({ calls: 10001 }) }],
      ["a user model's negative usd", { userModel: userModel({ usd: -0.01 }) }],
      ["a user model's usd past 1e6", { userModel: userModel({ usd: 1e6 + 1 }) }],
      ["a user model's unknown field", { userModel: { ...userModel(), apiKey: 'k' } }],
      ['a user model without its provider', { userModel: { ...userModel(), provider: undefined } }],
    ])('refuses %s with 400', async (_name, change) => {
      const answer = await report(passedResult(change));
      expect(answer.status).toBe(400);
    });

    it("records the conversation and prices the simulated user's model use as the saga does", async () => {
      const cases = [
        { id: 'talks', variables: { word: 'hi' }, verify: 'true', user: { kind: 'simulated', goal: 'get a greeting', prompt: 'You want a greeting.' } },
      ];
      const started = await startLocal(localBody({ cases, trials: 2 }));
      const trials = await lease(started.id, 2);
      const conversation = [
        { _tag: 'message', role: 'user', turn: 1, text: 'hello?', at: 1 },
        { _tag: 'message', role: 'agent', turn: 1, text: 'hello!', at: 2 },
        { _tag: 'conversation', turns: 1, endReason: 'user-done' },
      ];
      const results = [
        passedResult({ trajectory: conversation, conversation: { turns: 1, endReason: 'user-done' }, userModel: userModel({ calls: 10000, usd: 1e6 }) }),
        passedResult({ trajectory: conversation, conversation: { turns: 1, endReason: 'user-done' }, userModel: userModel({ usd: null }) }),
      ];
      for (const [index, trial] of trials.entries()) {
        const answer = await api.call('runner.trials.report', { id: started.id, trialId: trial.id, lease: trial.lease.id, result: results[index] });
        expect([index, answer.status, answer.body]).toEqual([index, 200, { id: trial.id, status: 'passed' }]);
      }
      const batch = await waitForBatch(api, started.id);
      const byId = new Map<string, any>(batch.runs[0].trials.map((t: any) => [t.id, t]));
      const userCost = (trialId: string) => byId.get(trialId).costs.components.find((c: any) => c.component === 'user');
      expect(userCost(trials[0].id)).toMatchObject({
        classification: 'simulated-user',
        usd: 1e6,
        source: 'openai',
        detail: { provider: 'openai', model: 'gpt-4o-mini', calls: 10000, inputTokens: 120, outputTokens: 30, totalTokens: 150 },
      });
      expect(userCost(trials[1].id)).toMatchObject({ classification: 'simulated-user', usd: null, source: 'openai' });
      expect(byId.get(trials[1].id).costs.incomplete).toBe(true);
      expect(byId.get(trials[0].id).trajectory.map((e: any) => e._tag)).toEqual(['message', 'message', 'conversation']);
    });

    it('accepts each bound itself', async () => {
      const started = await startLocal(localBody({ trials: 3 }));
      const trials = await lease(started.id, 3);
      const results = [
        passedResult({ trajectory: Array.from({ length: 1000 }, () => command('')) }),
        passedResult({ trajectory: [command('x'.repeat(bound)), { _tag: 'message', role: 'agent', turn: 1, text: 'é'.repeat(bound / 2), at: 1 }] }),
        passedResult({ status: 'failed', failure: 'f'.repeat(240), exitCode: 255 }),
      ];
      for (const [index, trial] of trials.entries()) {
        const answer = await api.call('runner.trials.report', { id: started.id, trialId: trial.id, lease: trial.lease.id, result: results[index] });
        expect([index, answer.status]).toEqual([index, 200]);
      }
      const batch = await waitForBatch(api, started.id);
      const byId = new Map(batch.runs[0].trials.map((t: any) => [t.id, t]));
      expect((byId.get(trials[0].id) as any).commands).toBe(1000);
      expect(byId.get(trials[2].id) as any).toMatchObject({ status: 'failed', failure: 'f'.repeat(240) });
      await finish(started.id, false);
    });
  });
});

/** Leases and silence on a server whose windows are short, so the tests can wait them out. */
describe('runner leases and heartbeats', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_RUNNER_LEASE_MS: '1500', ASSAY_RUNNER_SILENCE_MS: '2500' });
    api = server.client;
  });
  afterAll(() => server.close());

  async function leaseOne(batchId: string): Promise<any> {
    let trial: any = null;
    await waitUntil(async () => {
      trial = (await api.call('runner.trials.lease', { id: batchId })).body.trials[0] ?? null;
      return trial !== null;
    }, 10000);
    return trial;
  }

  it('refuses the report of a lease that expired, then voids that trial', async () => {
    const started = (await api.call('runner.batches.start', localBody())).body;
    const trial = await leaseOne(started.id);
    await new Promise((resolve) => setTimeout(resolve, 1700));
    const late = await api.call('runner.trials.report', { id: started.id, trialId: trial.id, lease: trial.lease.id, result: passedResult() });
    expect(late.status).toBe(409);
    expect(late.body.message).toContain('expired');
    const batch = await waitForBatch(api, started.id, 30000);
    expect(batch.status).toBe('failed');
    expect(batch.runs[0].trials[0]).toMatchObject({ status: 'void', failure: "the runner's lease on this trial expired" });
  });

  it('fails a batch with checksIn that never beats, and frees its slot for a new batch', async () => {
    const silent = [];
    for (let index = 0; index < 3; index += 1) silent.push((await api.call('runner.batches.start', { ...localBody(), checksIn: true })).body);
    expect((await api.call('evals.batches.start', startBody())).status).toBe(409);
    const batch = await waitForBatch(api, silent[0].id, 30000);
    expect(batch).toMatchObject({ status: 'failed', failure: 'runner stopped checking in', local: true });
    expect(batch.runs[0].trials[0]).toMatchObject({ status: 'void', failure: 'runner stopped checking in' });
    expect((await api.call('runner.trials.lease', { id: silent[0].id })).status).toBe(409);
    for (const other of silent.slice(1)) await waitForBatch(api, other.id, 30000);
    const next = await api.call('runner.batches.start', { ...localBody(), checksIn: true });
    expect(next.status).toBe(200);
    expect((await api.call('runner.batches.finish', { id: next.body.id })).status).toBe(200);
  });

  it("keeps a beating runner's batch and its lease alive past the silence window", async () => {
    const started = (await api.call('runner.batches.start', { ...localBody(), checksIn: true })).body;
    const trial = await leaseOne(started.id);
    for (let beat = 0; beat < 8; beat += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await api.call('runner.beat', { id: started.id })).status).toBe(200);
    }
    const reported = await api.call('runner.trials.report', { id: started.id, trialId: trial.id, lease: trial.lease.id, result: passedResult() });
    expect(reported.status).toBe(200);
    expect((await waitForBatch(api, started.id)).status).toBe('finished');
  });
});
