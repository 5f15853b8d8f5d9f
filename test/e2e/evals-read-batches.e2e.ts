import * as path from 'node:path';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { EVENT_LOG_FILE } from '../../src/runtime';
import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { rebuildFromLog, replayTwice, snapshot } from '../support/read-models';
import { INIT_KEY, InProcessServer, keyFor, startInProcess } from '../support/servers';

/** A batch whose one trial finishes at once: `true` runs, `true` verifies. */
function quickBody(caseId = 'quick', overrides: Record<string, unknown> = {}): Record<string, any> {
  return startBody({
    cases: [{ id: caseId, variables: { word: 'x' }, verify: 'true' }],
    variants: [{ harness: 'command', model: 'm', profile: { run: 'true' } }],
    ...overrides,
  });
}

/** Starts batches a slot's worth (three) at a time and waits for each group to finish. */
async function runBatches(api: ApiClient, count: number, body: () => Record<string, unknown>): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count; done += 3) {
    const group = Math.min(3, count - done);
    const started = await Promise.all(Array.from({ length: group }, () => api.call('evals.batches.start', body())));
    for (const answer of started) if (answer.status !== 200) throw new Error(`start answered ${answer.status}: ${answer.text}`);
    await Promise.all(started.map((answer) => waitForBatch(api, answer.body.id)));
    ids.push(...started.map((answer) => answer.body.id as string));
  }
  return ids;
}

/** Rebuilds every read model from the log, and replays it with redeliveries, expecting the live documents. */
async function expectRebuildEqual(server: InProcessServer): Promise<void> {
  await server.runtime.projections.waitFor(await server.runtime.eventStore.headPosition(), 10000);
  const live = await snapshot(server.runtime.readStore);
  expect(live.eval_cases.length).toBeGreaterThan(0);
  expect(await snapshot(await rebuildFromLog(server.runtime.eventStore))).toEqual(live);
  expect(await snapshot(await replayTwice(server.runtime.eventStore))).toEqual(live);
}

/** Newest first: startedAt, then id, both descending. */
function newestFirst(a: { startedAt: string; id: string }, b: { startedAt: string; id: string }): number {
  if (a.startedAt !== b.startedAt) return a.startedAt < b.startedAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

describe('evals read side: batches and runs', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let globex: ApiClient;
  let firstBatches: string[];

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    globex = await keyFor(server, 'globex', ['evals:read', 'evals:write'], 'globex');
    firstBatches = await runBatches(api, 45, () => quickBody());
  }, 300000);

  afterAll(() => server.close());

  const list = async (body: Record<string, unknown>, client = api) => {
    const answer = await client.call('evals.batches.list', body);
    expect(answer.status).toBe(200);
    return answer.body;
  };

  it('pages through 45 batches with limit 20, newest first, with no repeat and no gap while new batches start', async () => {
    const first = await list({ limit: 20 });
    expect(first.total).toBe(45);
    expect(first.batches).toHaveLength(20);
    expect([...first.batches].sort(newestFirst)).toEqual(first.batches);
    const last = first.batches[19];
    expect(first.next).toEqual({ id: last.id, startedAtMillis: Date.parse(last.startedAt), name: 'greetings' });

    const between = await runBatches(api, 2, () => quickBody());
    const second = await list({ cursor: first.next, limit: 20 });
    expect(second.total).toBe(47);
    expect(second.batches).toHaveLength(20);
    expect(second.batches.some((batch: any) => between.includes(batch.id))).toBe(false);

    const after = await runBatches(api, 1, () => quickBody());
    const third = await list({ cursor: second.next, limit: 20 });
    expect(third.total).toBe(48);
    expect(third.batches).toHaveLength(5);
    expect(third.next).toBeNull();

    const seen = [...first.batches, ...second.batches, ...third.batches];
    expect(seen.map((batch) => batch.id).sort()).toEqual([...firstBatches].sort());
    expect([...seen].sort(newestFirst)).toEqual(seen);
    const fresh = await list({ limit: 3 });
    expect(fresh.batches.map((batch: any) => batch.id).sort()).toEqual([...between, ...after].sort());
    expect(fresh.batches[0].id).toBe(after[0]);
  }, 120000);

  it('answers every field of the batch summary', async () => {
    const body = quickBody('summary', {
      cases: [
        { id: 'summary-a', variables: { word: 'x' }, verify: 'true' },
        { id: 'summary-b', variables: { word: 'x' }, verify: 'false' },
      ],
      variants: [
        { harness: 'command', model: 'm', profile: { run: 'true' } },
        { harness: 'command', model: 'n', profile: { run: 'true' } },
      ],
      trials: 2,
    });
    const headers = { 'assay-trigger-source': 'dashboard', 'assay-trigger-url': 'https://example.test/evals' };
    const started = await api.call('evals.batches.start', body, { headers });
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id);
    const [summary] = (await list({ limit: 1 })).batches;
    expect(summary).toEqual({
      id: started.body.id,
      status: 'finished',
      startedAt: batch.startedAt,
      finishedAt: batch.finishedAt,
      failure: null,
      cases: 2,
      runs: 4,
      scored: 8,
      passed: 4,
      voided: 0,
      trigger: { source: 'dashboard', url: 'https://example.test/evals' },
      suite: { id: 'greetings', name: 'greetings' },
    });
    expect(summary.startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(summary.finishedAt)).toBeGreaterThanOrEqual(Date.parse(summary.startedAt));
  }, 60000);

  it('clamps limit to 1..100 and defaults it to 20', async () => {
    const { total } = await list({ limit: 1 });
    await runBatches(api, Math.max(0, 102 - total), () => quickBody());
    const all = await list({ limit: 100 });
    expect(all.total).toBeGreaterThanOrEqual(102);
    expect(all.batches).toHaveLength(100);
    expect(all.next).toEqual({ id: all.batches[99].id, startedAtMillis: Date.parse(all.batches[99].startedAt), name: 'greetings' });
    expect((await list({ limit: 101 })).batches).toHaveLength(100);
    expect((await list({ limit: 100000 })).batches).toHaveLength(100);
    expect((await list({ limit: 0 })).batches).toHaveLength(1);
    expect((await list({ limit: -5 })).batches).toHaveLength(1);
    expect((await list({ limit: 1 })).batches).toHaveLength(1);
    expect((await list({ limit: 2.9 })).batches).toHaveLength(2);
    expect((await list({})).batches).toHaveLength(20);
    expect((await list({ cursor: null })).batches).toHaveLength(20);
    const rest = await list({ cursor: all.next, limit: 100 });
    expect(rest.batches).toHaveLength(all.total - 100);
    expect(rest.next).toBeNull();
  }, 300000);

  it('refuses a malformed limit or cursor with 400 HttpApiDecodeError', async () => {
    for (const body of [
      { limit: 'ten' },
      { cursor: 'abc' },
      { cursor: { id: 'bat_x', name: 'n' } },
      { cursor: { id: '', startedAtMillis: 1, name: 'n' } },
      { cursor: { id: 'x', startedAtMillis: -1, name: 'n' } },
    ]) {
      const answer = await api.call('evals.batches.list', body);
      expect(answer.status).toBe(400);
      expect(answer.body._tag).toBe('HttpApiDecodeError');
      expect(answer.body.issues[0].path[0]).toBe(Object.keys(body)[0]);
    }
  });

  it("keeps organizations apart: another organization's batches and runs are not listed and answer 404", async () => {
    const theirs = await globex.call('evals.batches.start', quickBody());
    expect(theirs.status).toBe(200);
    await waitForBatch(globex, theirs.body.id);
    const ours = await list({ limit: 100 });
    expect(ours.batches.map((batch: any) => batch.id)).not.toContain(theirs.body.id);
    const their = await list({}, globex);
    expect(their).toMatchObject({ total: 1, next: null });
    expect(their.batches.map((batch: any) => batch.id)).toEqual([theirs.body.id]);
    const get = await api.call('evals.batches.get', { id: theirs.body.id });
    expect(get.status).toBe(404);
    expect(get.body._tag).toBe('NotFound');
    expect((await api.call('evals.runs.get', { id: theirs.body.runs[0].id })).status).toBe(404);
    expect((await globex.call('evals.runs.list', { caseId: 'summary-a' })).status).toBe(404);
    expect((await globex.call('evals.runs.list', { caseId: 'quick' })).body.total).toBe(1);
  });

  describe('evals.runs.list', () => {
    let variantId: string;

    beforeAll(async () => {
      const detail = await api.call('evals.cases.get', { id: 'quick' });
      variantId = detail.body.variants[0].variant.id;
      await runBatches(api, 1, () => quickBody('quick', { variants: [{ harness: 'command', model: 'other', profile: { run: 'true' } }] }));
    });

    it("pages a case variant's runs newest first, 20 a page, from page 1", async () => {
      const answer = await api.call('evals.runs.list', { caseId: 'quick', variant: variantId });
      expect(answer.status).toBe(200);
      const { runs, page, pageSize, total } = answer.body;
      expect({ page, pageSize }).toEqual({ page: 1, pageSize: 20 });
      expect(runs).toHaveLength(20);
      expect(runs.every((run: any) => run.case.id === 'quick' && run.variant.id === variantId)).toBe(true);
      const pages = Math.ceil(total / 20);
      const all: any[] = [...runs];
      for (let n = 2; n <= pages + 1; n += 1) {
        const next = await api.call('evals.runs.list', { caseId: 'quick', variant: variantId, page: n });
        expect(next.body).toMatchObject({ page: n, pageSize: 20, total });
        all.push(...next.body.runs);
      }
      expect(all).toHaveLength(total);
      expect(new Set(all.map((run) => run.id)).size).toBe(total);
      const order = (run: any) => [run.startedAt, run.id].join(' ');
      expect(all.map(order)).toEqual(all.map(order).sort().reverse());
    }, 60000);

    it('answers full runs, as evals.runs.get does, and filters by variant', async () => {
      const everything = await api.call('evals.runs.list', { caseId: 'quick' });
      const [newest] = everything.body.runs;
      expect(newest.variant.model).toBe('other');
      const byId = await api.call('evals.runs.get', { id: newest.id });
      expect(newest).toEqual(byId.body);
      expect(Object.keys(newest).sort()).toEqual(
        [
          'batchId',
          'case',
          'costs',
          'definitionHash',
          'distribution',
          'failure',
          'finishedAt',
          'harnessVersion',
          'id',
          'local',
          'profileVersion',
          'sandbox',
          'setup',
          'startedAt',
          'status',
          'suite',
          'trials',
          'trigger',
          'variant',
        ].sort(),
      );
      const mine = await api.call<{ total: number }>('evals.runs.list', { caseId: 'quick', variant: variantId });
      expect(everything.body.total).toBe(mine.body.total + 1);
      expect(await api.call('evals.runs.list', { caseId: 'quick', variant: newest.variant.id }).then((a) => a.body.total)).toBe(1);
    });

    it('answers an empty page past the last, 404 for an unknown case or variant, 400 for a bad page', async () => {
      const beyond = await api.call('evals.runs.list', { caseId: 'quick', variant: variantId, page: 999 });
      expect(beyond.body.runs).toEqual([]);
      expect(beyond.body.total).toBeGreaterThan(0);
      expect((await api.call('evals.runs.list', { caseId: 'no-such-case' })).status).toBe(404);
      expect((await api.call('evals.runs.list', { caseId: 'quick', variant: 'var_nope' })).status).toBe(404);
      for (const page of [0, -1, 1.5, 'two']) {
        const answer = await api.call('evals.runs.list', { caseId: 'quick', page });
        expect(answer.status).toBe(400);
        expect(answer.body.issues[0].path).toEqual(['page']);
      }
      expect((await api.call('evals.runs.list', {})).status).toBe(400);
    });
  });

  it('rebuilds the same read models from the log after a hundred batches', async () => {
    await expectRebuildEqual(server);
  }, 60000);

  it('needs evals:read for every read operation', async () => {
    const created = await api.call('auth.keys.create', { name: 'prompts only', permissions: ['prompts:read'] });
    const reader = await api.call('auth.keys.create', { name: 'reader', permissions: ['evals:read'] });
    const reads: Array<[string, Record<string, unknown>]> = [
      ['evals.batches.list', {}],
      ['evals.runs.list', { caseId: 'quick' }],
      ['evals.cases.get', { id: 'quick' }],
      ['evals.cases.list', {}],
      ['evals.suites.get', { id: 'greetings' }],
      ['evals.suites.list', {}],
      ['evals.models.list', { q: '' }],
    ];
    for (const [operation, body] of reads) {
      const refused = await api.withKey(created.body.key).call(operation, body);
      expect([operation, refused.status, refused.body._tag]).toEqual([operation, 403, 'Forbidden']);
      expect([operation, (await api.withKey(reader.body.key).call(operation, body)).status]).toEqual([operation, 200]);
      expect([operation, (await api.withKey(null).call(operation, body)).status]).toEqual([operation, 401]);
    }
  });
});

describe('evals read side: a batch read while its trials run', () => {
  let server: InProcessServer;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_MAX_PARALLEL_TRIALS: '1' });
  });

  afterAll(() => server.close());

  it('shows queued and running trials, then a partial distribution and costs, then the finish', async () => {
    const api = server.client;
    const body = quickBody('sleepy', { variants: [{ harness: 'command', model: 'm', profile: { run: 'sleep 3' } }], trials: 2 });
    const started = await api.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const seen = new Set<string>();
    const statusesOf = (batch: any): string =>
      batch.runs[0].trials
        .map((trial: any) => trial.status)
        .sort()
        .join(',');
    let partial: any = null;
    let comparedWhileRunning = 0;
    for (const deadline = Date.now() + 60000; Date.now() < deadline;) {
      const batch = (await api.call('evals.batches.get', { id: started.body.id })).body;
      const statuses = statusesOf(batch);
      seen.add(statuses);
      if (statuses === 'queued,running') {
        expect(batch).toMatchObject({ status: 'running', finishedAt: null });
        expect(batch.runs[0]).toMatchObject({ status: 'running', finishedAt: null, distribution: { trials: 2, scored: 0, passed: 0 } });
        const listed = (await api.call('evals.batches.list', {})).body.batches[0];
        const variant = (await api.call('evals.cases.get', { id: 'sleepy' })).body.variants[0];
        // The other read models are compared only if the first trial did not finish meanwhile.
        if (statusesOf((await api.call('evals.batches.get', { id: started.body.id })).body) === 'queued,running') {
          expect(listed).toMatchObject({ id: started.body.id, status: 'running', scored: 0 });
          expect(variant).toMatchObject({ status: 'running', runs: 1, lastRunId: started.body.runs[0].id, distribution: { trials: 2, scored: 0 } });
          comparedWhileRunning += 1;
        }
      }
      if (statuses === 'passed,running') partial = batch;
      if (batch.status !== 'running') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([...seen]).toEqual(expect.arrayContaining(['queued,running', 'passed,running', 'passed,passed']));
    expect(comparedWhileRunning).toBeGreaterThan(0);
    expect(partial.runs[0].distribution).toMatchObject({ trials: 2, scored: 1, passed: 1, passRate: 1 });
    expect(partial.runs[0].costs.components.length).toBeGreaterThan(0);
    expect(partial.costs.components.length).toBeGreaterThan(0);
    const variant = (await api.call('evals.cases.get', { id: 'sleepy' })).body.variants[0];
    expect(variant).toMatchObject({ status: 'finished', distribution: { trials: 2, scored: 2, passed: 2 } });
    await expectRebuildEqual(server);
  }, 90000);
});

describe('evals read side: never more trials running than places', () => {
  let server: InProcessServer;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_MAX_PARALLEL_TRIALS: '2' });
  });

  afterAll(() => server.close());

  it('shows at most ASSAY_MAX_PARALLEL_TRIALS trials running at every position of the log, each place refilled as a trial ends', async () => {
    const api = server.client;
    const started = await api.call('evals.batches.start', quickBody('places', { trials: 8 }));
    expect(started.status).toBe(200);
    expect((await waitForBatch(api, started.body.id)).status).toBe('finished');
    // The log as any reader sees it: the claims and the outcomes in position order.
    const log = SqliteEventStore.open(path.join(server.dataDir, EVENT_LOG_FILE));
    try {
      let running = 0;
      let most = 0;
      let claims = 0;
      for (const event of await log.readAll()) {
        if (event.type === 'TrialStarted') {
          claims += 1;
          most = Math.max(most, (running += 1));
        }
        if (event.type === 'TrialScored' || event.type === 'TrialVoided') running -= 1;
      }
      expect({ claims, most, runningAtTheEnd: running }).toEqual({ claims: 8, most: 2, runningAtTheEnd: 0 });
    } finally {
      await log.close();
    }
  }, 60000);
});
