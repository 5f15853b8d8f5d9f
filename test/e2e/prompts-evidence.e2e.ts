import { describeWithBubblewrap } from '../support/bubblewrap';
import { startBody, waitForBatch } from '../support/evals';
import type { Answer, ApiClient } from '../support/http-client';
import { INIT_KEY, InProcessServer, keyFor, startInProcess } from '../support/servers';

const ID = 'support/triage';
const PASSING = { harness: 'command', model: 'none', profile: { run: 'echo hello > out.txt' } };
const FAILING = { harness: 'command', model: 'none', profile: { run: 'true' } };
const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

function expectDecodeIssue(answer: Answer, path: Array<string | number>): void {
  expect(answer.status).toBe(400);
  expect(answer.body._tag).toBe('HttpApiDecodeError');
  expect(answer.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
}

function expectRefused(answer: Answer, status: number, text: string): void {
  expect({ status: answer.status, tag: answer.body?._tag }).toEqual({ status, tag: status === 409 ? 'Conflict' : status === 404 ? 'NotFound' : 'BadRequest' });
  expect(answer.body.message).toContain(text);
}

describe('prompts.snapshot: every prompt as it was served at an instant', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });
  afterAll(() => server.close());

  it('answers the channels of every prompt at three instants around two promotions', async () => {
    const before = new Date().toISOString();
    await pause();
    for (const [id, content] of [
      ['alpha', 'a1'],
      ['alpha', 'a2'],
      ['beta', 'b1'],
    ]) {
      expect((await api.call('prompts.versions.create', { id, content })).status).toBe(200);
    }
    await pause();
    const beforePromotions = new Date().toISOString();
    await pause();
    expect((await api.call('prompts.promote', { id: 'alpha', channel: 'production', version: 1 })).status).toBe(200);
    await pause();
    const between = new Date().toISOString();
    await pause();
    expect((await api.call('prompts.promote', { id: 'alpha', channel: 'production', version: 2 })).status).toBe(200);
    await pause();
    const after = new Date().toISOString();
    const globex = await keyFor(server, 'globex', ['prompts:write', 'prompts:read']);
    expect((await globex.call('prompts.versions.create', { id: 'alpha', content: 'globex' })).status).toBe(200);

    const at = async (instant: string) => {
      const answer = await api.call('prompts.snapshot', { at: instant });
      expect(answer.status).toBe(200);
      expect(answer.body.at).toBe(instant);
      return answer.body.prompts;
    };
    expect(await at(before)).toEqual([]);
    expect(await at(beforePromotions)).toEqual([
      { id: 'alpha', channels: { latest: 2 } },
      { id: 'beta', channels: { latest: 1 } },
    ]);
    expect(await at(between)).toEqual([
      { id: 'alpha', channels: { latest: 2, production: 1 } },
      { id: 'beta', channels: { latest: 1 } },
    ]);
    expect(await at(after)).toEqual([
      { id: 'alpha', channels: { latest: 2, production: 2 } },
      { id: 'beta', channels: { latest: 1 } },
    ]);
    const offset = new Date(Date.parse(between) + 2 * 3600 * 1000).toISOString().replace('Z', '+02:00');
    expect((await api.call('prompts.snapshot', { at: offset })).body.prompts).toEqual(await at(between));
  });

  it('refuses a missing, zone-less or unreal instant', async () => {
    expectDecodeIssue(await api.call('prompts.snapshot', {}), ['at']);
    expectDecodeIssue(await api.call('prompts.snapshot', { at: '2025-01-31T12:00:00' }), ['at']);
    expectDecodeIssue(await api.call('prompts.snapshot', { at: '2025-02-30T12:00:00Z' }), ['at']);
    expectDecodeIssue(await api.call('prompts.snapshot', { at: 'now', extra: 1 }), ['extra']);
  });
});

describeWithBubblewrap('evidence-gated promotion', () => {
  let server: InProcessServer;
  let api: ApiClient;

  const runBatch = async (version: number, variant: Record<string, unknown>): Promise<string> => {
    const body = startBody({ suite: { id: 'triage', prompt: `{{prompt:${ID}@${version}}} Write {{word}} into out.txt` }, variants: [variant], trials: 2 });
    const started = await api.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    expect((await waitForBatch(api, started.body.id)).status).toBe('finished');
    return started.body.id as string;
  };
  const promote = (body: Record<string, unknown> = {}) => api.call('prompts.promote', { id: ID, channel: 'production', version: 2, ...body });

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    expect((await api.call('prompts.versions.create', { id: ID, content: 'Triage version one.' })).status).toBe(200);
    expect((await api.call('prompts.versions.create', { id: ID, content: 'Triage version two.' })).status).toBe(200);
  });
  afterAll(() => server.close());

  it('resolves {{prompt:ID@VERSION}} at start, records it in BatchStarted, and refuses a missing prompt or version', async () => {
    const batchId = await runBatch(2, PASSING);
    const started = (await api.call('audit.events.list', { stream: `batch-${batchId}`, type: 'BatchStarted' })).body.events[0];
    expect(started.data.prompts).toEqual([{ promptId: ID, version: 2 }]);
    expect(started.data.suite.prompt).toBe('Triage version two. Write {{word}} into out.txt');
    const missingVersion = await api.call('evals.batches.start', startBody({ suite: { id: 'triage', prompt: `{{prompt:${ID}@3}} {{word}}` } }));
    expectRefused(missingVersion, 400, 'has no version 3');
    const missingPrompt = await api.call('evals.batches.start', startBody({ suite: { id: 'triage', prompt: '{{prompt:nowhere@1}} {{word}}' } }));
    expectRefused(missingPrompt, 400, 'prompt "nowhere" does not exist');
  }, 60_000);

  it('refuses promotions to a gated channel without evidence, below the bar, or of another version, then allows one', async () => {
    expect((await api.call('prompts.policies.set', { channel: 'production', requireEvidence: { minPassRate: 0.5, minTrials: 2 } })).status).toBe(200);
    expect((await api.call('prompts.policies.list', {})).body.data).toEqual([
      expect.objectContaining({ channel: 'production', requireEvidence: { minPassRate: 0.5, minTrials: 2 } }),
    ]);
    expectRefused(await promote(), 409, 'give "evidence"');
    const failing = await runBatch(2, FAILING);
    expectRefused(await promote({ evidence: { batchId: failing } }), 409, 'passed 0 of 2 scored trials');
    const otherVersion = await runBatch(1, PASSING);
    expectRefused(await promote({ evidence: { batchId: otherVersion } }), 409, `ran ${ID}@1`);
    expectRefused(await promote({ evidence: { batchId: 'batch_nonexistent' } }), 404, 'does not exist');
    const globex = await keyFor(server, 'globex', ['prompts:write', 'prompts:read']);
    expect((await globex.call('prompts.versions.create', { id: ID, content: 'g1' })).status).toBe(200);
    expect((await globex.call('prompts.versions.create', { id: ID, content: 'g2' })).status).toBe(200);
    const good = await runBatch(2, PASSING);
    expectRefused(await globex.call('prompts.promote', { id: ID, channel: 'staging', version: 2, evidence: { batchId: good } }), 404, 'does not exist');
    expect((await api.call('prompts.get', { id: ID, channel: 'production' })).status).toBe(404);

    expect((await promote({ evidence: { batchId: good } })).status).toBe(200);
    expect((await api.call('prompts.get', { id: ID, channel: 'production' })).body.version).toBe(2);
    const history = (await api.call('prompts.history', { id: ID, channel: 'production' })).body.data;
    expect(history).toEqual([expect.objectContaining({ kind: 'promoted', toVersion: 2, evidence: { batchId: good, scored: 2, passed: 2, passRate: 1 } })]);
    // An ungated channel takes a promotion without evidence, and records evidence when given.
    expect((await api.call('prompts.promote', { id: ID, channel: 'staging', version: 1 })).status).toBe(200);
    expect((await api.call('prompts.history', { id: ID, channel: 'staging' })).body.data[0].evidence).toBeNull();
    // Lifting the gate.
    expect((await api.call('prompts.policies.set', { channel: 'production', requireEvidence: null })).status).toBe(200);
    expect((await api.call('prompts.policies.list', {})).body.data).toEqual([]);
    expect((await promote({ version: 1 })).status).toBe(200);
  }, 120_000);

  it('refuses bad policy and evidence bodies on both sides of each bound', async () => {
    const set = (requireEvidence: unknown, channel = 'canary') => api.call('prompts.policies.set', { channel, requireEvidence });
    expect((await set({ minPassRate: 0, minTrials: 1 })).status).toBe(200);
    expect((await set({ minPassRate: 1, minTrials: 100_000 })).status).toBe(200);
    expectDecodeIssue(await set({ minPassRate: -0.01, minTrials: 1 }), ['requireEvidence', 'minPassRate']);
    expectDecodeIssue(await set({ minPassRate: 1.01, minTrials: 1 }), ['requireEvidence', 'minPassRate']);
    expectDecodeIssue(await set({ minPassRate: 0.5, minTrials: 0 }), ['requireEvidence', 'minTrials']);
    expectDecodeIssue(await set({ minPassRate: 0.5, minTrials: 100_001 }), ['requireEvidence', 'minTrials']);
    expectDecodeIssue(await set({ minPassRate: 0.5, minTrials: 1.5 }), ['requireEvidence', 'minTrials']);
    expectDecodeIssue(await set({ minPassRate: 0.5 }), ['requireEvidence', 'minTrials']);
    expectDecodeIssue(await api.call('prompts.policies.set', { channel: 'canary' }), ['requireEvidence']);
    expectDecodeIssue(await set({ minPassRate: 0.5, minTrials: 1 }, 'Bad Channel'), ['channel']);
    expectRefused(await set({ minPassRate: 0.5, minTrials: 1 }, 'latest'), 400, 'latest');
    expectDecodeIssue(await api.call('prompts.policies.set', { channel: 'canary', requireEvidence: null, typo: true }), ['typo']);
    expectDecodeIssue(await promote({ evidence: { batchId: '' } }), ['evidence', 'batchId']);
    expectDecodeIssue(await promote({ evidence: { batchId: 'x'.repeat(101) } }), ['evidence', 'batchId']);
    expectDecodeIssue(await promote({ evidence: 'batch_1' }), ['evidence']);
    const reader = await keyFor(server, 'acme', ['prompts:read']);
    expect((await reader.call('prompts.policies.set', { channel: 'canary', requireEvidence: null })).status).toBe(403);
    expect((await reader.call('prompts.policies.list', {})).status).toBe(200);
  });
});
