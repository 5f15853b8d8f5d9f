import type { BatchStarted } from '#modules/evals/batches/batch.events';
import { newId } from '#shared/ids';
import { ApiClient } from '../support/http-client';
import { waitForBatch } from '../support/evals';
import { rebuildFromLog, replayTwice, snapshot } from '../support/read-models';
import { INIT_KEY, InProcessServer, keyFor, startInProcess } from '../support/servers';

const ALPHA = { harness: 'command', model: 'alpha', profile: { run: 'true' } };
const BETA = { harness: 'command', model: 'beta', profile: { run: 'true' } };
const MATH = { id: 'math', name: 'Math', prompt: 'Compute {{task}}', source: { kind: 'files', files: { 'a.txt': '1' } } };
const TEXT = { id: 'text', name: 'Text', prompt: 'Say {{word}}' };

const READ_MODELS = ['eval_batches', 'eval_runs', 'eval_cases', 'eval_case_tags', 'eval_suites'];

const mathBody = (addVerify: string, divideName: string | undefined, variants: unknown[], trials: number) => ({
  suite: MATH,
  cases: [
    { id: 'add-numbers', name: 'Add Numbers', variables: { task: '1+1' }, tags: ['arith', 'fast'], verify: addVerify },
    { id: 'divide', ...(divideName ? { name: divideName } : {}), variables: { task: '1/0' }, tags: ['arith'], verify: 'false' },
  ],
  variants,
  trials,
});

const textBody = {
  suite: TEXT,
  cases: [
    { id: 'upper-case', name: 'Upper Case', variables: { word: 'HI' }, tags: ['strings'], verify: 'true' },
    { id: 'banana', name: 'banana split', variables: { word: 'yum' }, tags: ['fast'], verify: 'true' },
  ],
  variants: [ALPHA],
  trials: 1,
};

describe('evals read side: cases and suites', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let globex: ApiClient;
  const batches: Record<string, any> = {};

  async function run(name: string, body: unknown, client = api): Promise<any> {
    const started = await client.call('evals.batches.start', body);
    if (started.status !== 200) throw new Error(`start answered ${started.status}: ${started.text}`);
    batches[name] = { started: started.body, batch: await waitForBatch(client, started.body.id) };
    return batches[name];
  }

  /** A batch as the service wrote it before suites were recorded: BatchStarted with no SuiteDefined. */
  async function runLegacyBatch(): Promise<void> {
    const template = (await server.runtime.eventStore.readAll()).find((event) => event.type === 'BatchStarted')! as unknown as BatchStarted & { metadata: any };
    const now = new Date();
    const batchId = newId('bat', now.getTime());
    const [definition] = template.data.cases;
    const [plannedRun] = template.data.runs;
    const data: BatchStarted['data'] = {
      ...template.data,
      batchId,
      startedAt: now.toISOString(),
      suite: { id: 'legacy', name: 'Legacy', prompt: 'Old prompt', source: null },
      cases: [{ ...definition, id: 'old-case', name: 'Old Case', tags: ['legacy'] }],
      runs: [
        {
          ...plannedRun,
          runId: newId('run', now.getTime()),
          caseId: 'old-case',
          caseName: 'Old Case',
          variantId: 'var_legacy',
          trialIds: [newId('trl', now.getTime())],
          tags: ['legacy'],
        },
      ],
      idempotencyKey: null,
    };
    await server.runtime.eventStore.append(
      `batch-${batchId}`,
      [{ id: globalThis.crypto.randomUUID(), type: 'BatchStarted', data, metadata: template.metadata }],
      'no_stream',
    );
    batches.legacy = { batch: await waitForBatch(api, batchId) };
  }

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    globex = await keyFor(server, 'globex', ['evals:read', 'evals:write'], 'globex');
    await run('m1', mathBody('true', undefined, [ALPHA, BETA], 1));
    await run('t1', textBody);
    await run('m2', mathBody('test 1 -eq 1', 'Division', [ALPHA], 2));
    await runLegacyBatch();
    await run('g1', { ...mathBody('true', undefined, [ALPHA], 1), suite: { ...MATH, id: 'theirs', name: 'Theirs' } }, globex);
  }, 120000);

  afterAll(() => server.close());

  const casesList = async (body: Record<string, unknown>) => {
    const answer = await api.call('evals.cases.list', body);
    expect(answer.status).toBe(200);
    return answer.body;
  };
  const ids = (list: { cases: Array<{ id: string }> }) => list.cases.map((entry) => entry.id);
  const runOf = (name: string, caseId: string, model: string) =>
    batches[name].batch.runs.find((run: any) => run.case.id === caseId && run.variant.model === model);

  describe('evals.cases.list', () => {
    it("lists the organization's cases by name, case-insensitively, with its suites and tags", async () => {
      const list = await casesList({});
      expect(ids(list)).toEqual(['add-numbers', 'banana', 'divide', 'old-case', 'upper-case']);
      expect(list.next).toBeNull();
      expect(list.suites).toEqual([
        { id: 'legacy', name: 'Legacy' },
        { id: 'math', name: 'Math' },
        { id: 'text', name: 'Text' },
      ]);
      expect(list.tags).toEqual(['arith', 'fast', 'legacy', 'strings']);
    });

    it('answers every field of a case summary, variants with their newest run', async () => {
      const [add] = (await casesList({ q: 'add' })).cases;
      const m2 = runOf('m2', 'add-numbers', 'alpha');
      const m1 = runOf('m1', 'add-numbers', 'beta');
      expect(add).toEqual({
        id: 'add-numbers',
        name: 'Add Numbers',
        lastRunAt: batches.m2.batch.startedAt,
        suite: { id: 'math', name: 'Math' },
        tags: ['arith', 'fast'],
        variants: [
          { variant: m2.variant, runs: 2, status: 'finished', lastRunAt: m2.startedAt, lastRunId: m2.id, distribution: m2.distribution },
          { variant: m1.variant, runs: 1, status: 'finished', lastRunAt: m1.startedAt, lastRunId: m1.id, distribution: m1.distribution },
        ],
      });
      expect(m2.variant).toEqual({
        id: expect.stringMatching(/^var_/),
        harness: 'command',
        model: 'alpha',
        profile: { run: 'true' },
        sandbox: null,
        userModel: null,
      });
      expect(m2.distribution).toMatchObject({ trials: 2, passed: 2, scored: 2 });
    });

    it('filters by suite, by tag and by a case-insensitive substring of id or name, together', async () => {
      expect(ids(await casesList({ suite: 'math' }))).toEqual(['add-numbers', 'divide']);
      expect(ids(await casesList({ tag: 'fast' }))).toEqual(['add-numbers', 'banana']);
      expect(ids(await casesList({ tag: 'arith', suite: 'text' }))).toEqual([]);
      expect(ids(await casesList({ tag: 'fast', suite: 'text' }))).toEqual(['banana']);
      expect(ids(await casesList({ q: 'ADD' }))).toEqual(['add-numbers']);
      expect(ids(await casesList({ q: 'ivi' }))).toEqual(['divide']);
      expect(ids(await casesList({ q: 'SPLIT' }))).toEqual(['banana']);
      expect(ids(await casesList({ q: 'case' }))).toEqual(['old-case', 'upper-case']);
      expect(ids(await casesList({ q: 'r c' }))).toEqual(['upper-case']);
      expect(ids(await casesList({ q: 'e', suite: 'text' }))).toEqual(['upper-case']);
      expect(ids(await casesList({ q: '.*' }))).toEqual([]);
      expect(ids(await casesList({ q: '' }))).toHaveLength(5);
      expect(ids(await casesList({ suite: 'nowhere' }))).toEqual([]);
      expect(ids(await casesList({ tag: 'nothing' }))).toEqual([]);
      const filtered = await casesList({ suite: 'nowhere' });
      expect(filtered.tags).toEqual(['arith', 'fast', 'legacy', 'strings']);
      expect(filtered.suites).toHaveLength(3);
    });

    it('pages with a cursor, filtered or not, and clamps the limit', async () => {
      const first = await casesList({ limit: 2 });
      expect(ids(first)).toEqual(['add-numbers', 'banana']);
      const banana = first.cases[1];
      expect(first.next).toEqual({ id: 'banana', startedAtMillis: Date.parse(banana.lastRunAt), name: 'banana split' });
      const second = await casesList({ limit: 2, cursor: first.next });
      expect(ids(second)).toEqual(['divide', 'old-case']);
      const third = await casesList({ limit: 2, cursor: second.next });
      expect(ids(third)).toEqual(['upper-case']);
      expect(third.next).toBeNull();
      const fast = await casesList({ tag: 'fast', limit: 1 });
      expect(ids(fast)).toEqual(['add-numbers']);
      expect(ids(await casesList({ tag: 'fast', limit: 1, cursor: fast.next }))).toEqual(['banana']);
      expect(ids(await casesList({ limit: 0 }))).toHaveLength(1);
      expect(ids(await casesList({ limit: 101 }))).toHaveLength(5);
    });

    it('refuses malformed filters with 400', async () => {
      for (const body of [{ suite: 'Not A Slug' }, { tag: '' }, { tag: 'x'.repeat(41) }, { q: 7 }, { limit: '5' }]) {
        const answer = await api.call('evals.cases.list', body);
        expect(answer.status).toBe(400);
        expect(answer.body.issues[0].path).toEqual([Object.keys(body)[0]]);
      }
    });

    it("shows another organization's cases only to it", async () => {
      const theirs = await globex.call('evals.cases.list', {});
      expect(theirs.body).toEqual({
        cases: [expect.objectContaining({ id: 'add-numbers', suite: { id: 'theirs', name: 'Theirs' } }), expect.objectContaining({ id: 'divide' })],
        next: null,
        suites: [{ id: 'theirs', name: 'Theirs' }],
        tags: ['arith', 'fast'],
      });
    });
  });

  describe('evals.cases.get', () => {
    it('answers the case detail: newest setup, variants and versions newest first', async () => {
      const answer = await api.call('evals.cases.get', { id: 'add-numbers' });
      expect(answer.status).toBe(200);
      const m2 = runOf('m2', 'add-numbers', 'alpha');
      const m1 = runOf('m1', 'add-numbers', 'alpha');
      const summary = (await casesList({ q: 'add-numbers' })).cases[0];
      const { lastRunAt: _lastRunAt, ...shared } = summary;
      expect(answer.body).toEqual({
        ...shared,
        setup: {
          prepare: null,
          prompt: 'Compute 1+1',
          source: { kind: 'files', files: { 'a.txt': '1' } },
          validator: null,
          verify: 'test 1 -eq 1',
          validatorFiles: [],
        },
        versions: [
          { author: 'initial key (ASSAY_INIT_API_KEY)', changes: ['verifier'], createdAt: batches.m2.batch.startedAt, definitionHash: m2.definitionHash },
          { author: 'initial key (ASSAY_INIT_API_KEY)', changes: [], createdAt: batches.m1.batch.startedAt, definitionHash: m1.definitionHash },
        ],
      });
      expect(answer.body.setup).toEqual(m2.setup);
      expect(m1.definitionHash).not.toBe(m2.definitionHash);
    });

    it('takes the name from the newest run: a rename is no new version', async () => {
      const divide = (await api.call('evals.cases.get', { id: 'divide' })).body;
      expect(divide.name).toBe('Division');
      expect(divide.versions).toHaveLength(1);
      expect(divide.variants.map((variant: any) => [variant.variant.model, variant.runs, variant.distribution.scored, variant.distribution.passed])).toEqual([
        ['alpha', 2, 2, 0],
        ['beta', 1, 1, 0],
      ]);
    });

    it('shows a case first seen in a batch alone, with no versions', async () => {
      const legacy = (await api.call('evals.cases.get', { id: 'old-case' })).body;
      expect(legacy).toMatchObject({ id: 'old-case', name: 'Old Case', suite: { id: 'legacy', name: 'Legacy' }, tags: ['legacy'], versions: [] });
      expect(legacy.variants[0]).toMatchObject({ runs: 1, status: 'finished', lastRunId: batches.legacy.batch.runs[0].id });
    });

    it("answers 404 for an unknown case or another organization's, 400 for a malformed id", async () => {
      expect((await api.call('evals.cases.get', { id: 'no-such-case' })).body._tag).toBe('NotFound');
      expect((await globex.call('evals.cases.get', { id: 'upper-case' })).status).toBe(404);
      expect((await api.call('evals.cases.get', { id: 'Bad Id' })).status).toBe(400);
      expect((await api.call('evals.cases.get', {})).status).toBe(400);
    });
  });

  describe('evals.suites.get and evals.suites.list', () => {
    it('answers the suite detail: tally over the newest run of each case and variant, distinct variants, setup, tags', async () => {
      const answer = await api.call('evals.suites.get', { id: 'math' });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({
        id: 'math',
        name: 'Math',
        lastRunAt: batches.m2.batch.startedAt,
        cases: 2,
        variants: 2,
        tally: { passed: 3, scored: 6 },
        setup: { prompt: 'Compute {{task}}', source: { kind: 'files', files: { 'a.txt': '1' } } },
        tags: ['arith', 'fast'],
      });
      const text = (await api.call('evals.suites.get', { id: 'text' })).body;
      expect(text).toMatchObject({
        cases: 2,
        variants: 1,
        tally: { passed: 2, scored: 2 },
        setup: { prompt: 'Say {{word}}', source: null },
        tags: ['fast', 'strings'],
      });
    });

    it('answers setup null for a suite whose last run predates the recorded suite', async () => {
      const legacy = (await api.call('evals.suites.get', { id: 'legacy' })).body;
      expect(legacy).toEqual({
        id: 'legacy',
        name: 'Legacy',
        lastRunAt: batches.legacy.batch.startedAt,
        cases: 1,
        variants: 1,
        tally: { passed: 1, scored: 1 },
        setup: null,
        tags: ['legacy'],
      });
    });

    it('lists suites most recently active first, with a cursor', async () => {
      const list = (await api.call('evals.suites.list', {})).body;
      expect(list.suites.map((suite: any) => suite.id)).toEqual(['legacy', 'math', 'text']);
      expect(list.next).toBeNull();
      const { setup: _setup, tags: _tags, ...summary } = (await api.call('evals.suites.get', { id: 'math' })).body;
      expect(list.suites[1]).toEqual(summary);
      const first = (await api.call('evals.suites.list', { limit: 1 })).body;
      expect(first.next).toEqual({ id: 'legacy', startedAtMillis: Date.parse(batches.legacy.batch.startedAt), name: 'Legacy' });
      const second = (await api.call('evals.suites.list', { limit: 1, cursor: first.next })).body;
      const third = (await api.call('evals.suites.list', { limit: 1, cursor: second.next })).body;
      expect([...first.suites, ...second.suites, ...third.suites].map((suite: any) => suite.id)).toEqual(['legacy', 'math', 'text']);
      expect(third.next).toBeNull();
      await run('t2', textBody);
      const after = (await api.call('evals.suites.list', {})).body;
      expect(after.suites.map((suite: any) => suite.id)).toEqual(['text', 'legacy', 'math']);
      expect(after.suites[0].lastRunAt).toBe(batches.t2.batch.startedAt);
    });

    it("answers 404 for an unknown suite or another organization's", async () => {
      expect((await api.call('evals.suites.get', { id: 'nowhere' })).body._tag).toBe('NotFound');
      expect((await api.call('evals.suites.get', { id: 'theirs' })).status).toBe(404);
      expect((await globex.call('evals.suites.get', { id: 'theirs' })).body.tally).toEqual({ passed: 1, scored: 2 });
      expect((await globex.call('evals.suites.list', {})).body.suites.map((suite: any) => suite.id)).toEqual(['theirs']);
    });
  });

  describe('rebuilding the read models from the log', () => {
    let live: Record<string, unknown[]>;

    beforeAll(async () => {
      await server.runtime.projections.waitFor(await server.runtime.eventStore.headPosition(), 10000);
      live = await snapshot(server.runtime.readStore);
    });

    it('gives every live document again, field for field', async () => {
      expect(Object.keys(live)).toEqual(expect.arrayContaining(READ_MODELS));
      expect(live.eval_cases).toHaveLength(7);
      expect(live.eval_suites).toHaveLength(4);
      expect(await snapshot(await rebuildFromLog(server.runtime.eventStore))).toEqual(live);
    });

    it('is idempotent: every event twice, then the whole log again, changes nothing', async () => {
      expect(await snapshot(await replayTwice(server.runtime.eventStore))).toEqual(live);
    });
  });
});
