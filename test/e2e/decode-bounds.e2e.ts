import { OTHER_OPERATIONS_MAX_BODY_BYTES } from '#infrastructure/http/body-limits';
import { MAX_ELEMENTS_PER_ARRAY, MAX_KEYS_PER_OBJECT, MAX_MEMBERS_PER_BODY } from '#infrastructure/http/decode/body-shape';
import { startBody } from '../support/evals';
import type { Answer } from '../support/http-client';
import { acmeServerPerSuite } from '../support/servers';

/** `{"k0":1,"k1":1,...}` with `count` keys, written out as text (no 100,000-key object in the test). */
function manyKeys(count: number, prefix = ''): string {
  const members: string[] = [];
  for (let index = 0; index < count; index += 1) members.push(`"k${index}":1`);
  return `{${prefix}${members.join(',')}}`;
}

function expectIssues(answer: Answer, issues: Array<{ _tag: string; path: Array<string | number> }>): void {
  expect(answer.status).toBe(400);
  expect(answer.body._tag).toBe('HttpApiDecodeError');
  expect(typeof answer.body.message).toBe('string');
  expect(answer.body.issues.map(({ _tag, path }: { _tag: string; path: unknown[] }) => ({ _tag, path }))).toEqual(issues);
}

describe('bodies with many keys, over real HTTP', () => {
  const suite = acmeServerPerSuite();

  it(`takes ${MAX_KEYS_PER_OBJECT} keys in one object and refuses one more with 400 naming its path`, async () => {
    const cursor = (extra: number) => manyKeys(extra, '"id":"a","startedAtMillis":1,"name":"x",');
    const atLimit = await suite.api.call('evals.suites.list', undefined, { rawBody: `{"cursor":${cursor(MAX_KEYS_PER_OBJECT - 3)}}` });
    expect(atLimit.status).toBe(200);
    const over = await suite.api.call('evals.suites.list', undefined, { rawBody: `{"cursor":${cursor(MAX_KEYS_PER_OBJECT - 2)}}` });
    expectIssues(over, [{ _tag: 'Refinement', path: ['cursor'] }]);
    expect(over.body.issues[0].message).toContain(String(MAX_KEYS_PER_OBJECT));
  });

  it('refuses 100,000 extra keys (it used to take seconds and then answer 200), and /health answers meanwhile', async () => {
    const rawBody = `{"cursor":${manyKeys(100_000, '"id":"a","startedAtMillis":1,"name":"x",')}}`;
    const pending = suite.api.call('evals.suites.list', undefined, { rawBody });
    const health = await suite.api.request('/health', undefined, { method: 'GET', key: null });
    expect(health.status).toBe(200);
    expectIssues(await pending, [{ _tag: 'Refinement', path: ['cursor'] }]);
  });

  it(`refuses an array of more than ${MAX_ELEMENTS_PER_ARRAY} elements with 400 naming its path`, async () => {
    // 100,000 empty variables used to overflow the stack while listing their issues: a 500.
    const rawBody = `{"variables":[${Array(100_000).fill('{}').join(',')}]}`;
    expectIssues(await suite.api.call('environment.set', undefined, { rawBody }), [{ _tag: 'Refinement', path: ['variables'] }]);
    const atLimit = `{"extra":[${Array(MAX_ELEMENTS_PER_ARRAY).fill(1).join(',')}]}`;
    expect((await suite.api.call('evals.suites.list', undefined, { rawBody: atLimit })).status).toBe(200);
    expect((await suite.api.call('environment.list', {})).body).toEqual([]);
  });

  it(`refuses a body of more than ${MAX_MEMBERS_PER_BODY} properties and elements in all, at its root`, async () => {
    const row = `[${Array(MAX_ELEMENTS_PER_ARRAY).fill(1).join(',')}]`;
    const rows = Math.ceil(MAX_MEMBERS_PER_BODY / MAX_ELEMENTS_PER_ARRAY);
    const within = await suite.api.call('evals.suites.list', undefined, {
      rawBody: `{"extra":[${Array(rows - 1)
        .fill(row)
        .join(',')}]}`,
    });
    expect(within.status).toBe(200);
    const over = await suite.api.call('evals.suites.list', undefined, { rawBody: `{"extra":[${Array(rows).fill(row).join(',')}]}` });
    expectIssues(over, [{ _tag: 'Refinement', path: [] }]);
  });

  it('refuses a start of more cases than it takes at ["cases"] alone, without validating each of them', async () => {
    const before = await suite.server.runtime.eventStore.headPosition();
    const answer = await suite.api.call('evals.batches.start', { ...startBody(), cases: Array(101).fill({}) });
    expectIssues(answer, [{ _tag: 'Refinement', path: ['cases'] }]);
    expect(answer.body.issues[0].message).toContain('100');
    expect(await suite.server.runtime.eventStore.headPosition()).toBe(before);
  });

  it('refuses 100,000 extra keys in an environment variable with 400, storing nothing', async () => {
    const rawBody = `{"variables":[${manyKeys(100_000, '"name":"A","value":"x",')}]}`;
    expectIssues(await suite.api.call('environment.set', undefined, { rawBody }), [{ _tag: 'Refinement', path: ['variables', 0] }]);
    expect((await suite.api.call('environment.list', {})).body).toEqual([]);
  });
});

describe('body limits per operation, with the default configuration', () => {
  const suite = acmeServerPerSuite();

  /** A JSON body of exactly `size` bytes: `fields` plus a padding member. */
  function padded(fields: Record<string, unknown>, size: number): string {
    const skeleton = JSON.stringify({ ...fields, pad: '' });
    return skeleton.replace('"pad":""', `"pad":"${'x'.repeat(size - Buffer.byteLength(skeleton))}"`);
  }

  it(`refuses a read's body past ${OTHER_OPERATIONS_MAX_BODY_BYTES} bytes, and takes one of that size to a batch start`, async () => {
    const size = OTHER_OPERATIONS_MAX_BODY_BYTES + 1;
    const read = await suite.api.call('evals.suites.list', undefined, { rawBody: padded({}, size) });
    expect(read.status).toBe(400);
    expect(read.body).toEqual({ _tag: 'BadRequest', message: expect.stringContaining('16 MiB') });
    expect((await suite.api.call('evals.suites.list', undefined, { rawBody: padded({}, size - 1) })).status).toBe(200);
    // The start reads the whole body and decodes it: its only fault is the unknown padding member.
    const start = await suite.api.call('evals.batches.start', undefined, { rawBody: padded(startBody(), size) });
    expectIssues(start, [{ _tag: 'Unexpected', path: ['pad'] }]);
    expect((await suite.api.call('evals.batches.list', {})).body.batches).toEqual([]);
  });
});

describe('bodies that used to answer 500, over real HTTP: now 400 in the spec shape, storing nothing', () => {
  const suite = acmeServerPerSuite();

  afterEach(() => {
    expect(suite.server.logs.entries().filter((entry) => entry.level === 'error')).toEqual([]);
  });

  async function refusedStart(body: unknown): Promise<Answer> {
    const before = await suite.server.runtime.eventStore.headPosition();
    const answer = await suite.api.call('evals.batches.start', body);
    expect(await suite.server.runtime.eventStore.headPosition()).toBe(before);
    return answer;
  }

  it('evals.models.list {"q": null} is a Type issue at ["q"]', async () => {
    expectIssues(await suite.api.call('evals.models.list', { q: null }), [{ _tag: 'Type', path: ['q'] }]);
    expectIssues(await suite.api.call('evals.models.list', { harness: null }), [{ _tag: 'Type', path: ['harness'] }]);
    expect((await suite.api.call('evals.models.list', {})).status).toBe(200);
  });

  it('evals.batches.start without a suite is Missing at ["suite"]; an array for it is a Type issue', async () => {
    const { suite: _suite, ...withoutSuite } = startBody();
    expectIssues(await refusedStart(withoutSuite), [{ _tag: 'Missing', path: ['suite'] }]);
    expectIssues(await refusedStart({ ...startBody(), suite: [] }), [{ _tag: 'Type', path: ['suite'] }]);
    expectIssues(await refusedStart({ ...startBody(), suite: [startBody().suite] }), [{ _tag: 'Type', path: ['suite'] }]);
    expectIssues(await refusedStart({ ...startBody(), cases: [[]] }), [{ _tag: 'Type', path: ['cases', 0] }]);
  });

  it.each(['valueOf', 'toString', '__proto__', 'hasOwnProperty', 'constructor'])('a workspace source of kind %j is a Composite issue', async (kind) => {
    const body = startBody();
    expectIssues(await refusedStart({ ...body, suite: { ...body.suite, source: { kind } } }), [{ _tag: 'Composite', path: ['suite', 'source'] }]);
    const withCase = { ...body, cases: [{ ...body.cases[0], source: { kind } }] };
    expectIssues(await refusedStart(withCase), [{ _tag: 'Composite', path: ['cases', 0, 'source'] }]);
  });

  it('refuses Object.prototype names as unknown properties of a strict body (they used to be dropped silently)', async () => {
    for (const name of ['hasOwnProperty', 'toString', 'isPrototypeOf']) {
      const before = await suite.server.runtime.eventStore.headPosition();
      const answer = await suite.api.call('auth.keys.create', { name: 'k', permissions: ['evals:read'], [name]: 1 });
      expectIssues(answer, [{ _tag: 'Unexpected', path: [name] }]);
      expect(await suite.server.runtime.eventStore.headPosition()).toBe(before);
    }
  });

  it('environment.set {"variables": [[]]} is a Type issue at ["variables", 0]', async () => {
    expectIssues(await suite.api.call('environment.set', { variables: [[]] }), [{ _tag: 'Type', path: ['variables', 0] }]);
    expectIssues(await suite.api.call('environment.set', { variables: [[{ name: 'A', value: 'x' }]] }), [{ _tag: 'Type', path: ['variables', 0] }]);
    expect((await suite.api.call('environment.list', {})).body).toEqual([]);
  });
});
