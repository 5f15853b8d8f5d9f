import { ApiClient } from '../support/http-client';
import { startBody } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/** Every refusal of a start: decode issues at their paths and the 400 rules with their messages. */
describe('evals.batches.start refuses bad input, storing nothing', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  async function refused(body: unknown) {
    const before = await server.runtime.eventStore.headPosition();
    const answer = await api.call('evals.batches.start', body);
    expect(answer.status).toBe(400);
    expect(await server.runtime.eventStore.headPosition()).toBe(before);
    return answer.body;
  }

  const caseWith = (fields: Record<string, unknown>) => startBody({ cases: [{ id: 'c', verify: 'true', variables: { word: 'x' }, ...fields }] });
  const variantWith = (fields: Record<string, unknown>) => startBody({ variants: [{ harness: 'command', model: 'm', profile: { run: 'true' }, ...fields }] });

  it('reports a missing suite prompt as Missing at ["suite","prompt"]', async () => {
    const body = startBody({ suite: { id: 's' } });
    expect((await refused(body)).issues).toEqual([{ _tag: 'Missing', path: ['suite', 'prompt'], message: 'is missing' }]);
  });

  it('reports an unknown property of a case as Unexpected at ["cases",0,"extra"]', async () => {
    const issues = (await refused(caseWith({ extra: 1 }))).issues;
    expect(issues).toEqual([{ _tag: 'Unexpected', path: ['cases', 0, 'extra'], message: expect.any(String) }]);
  });

  it('refuses unknown properties at every depth, including the top level', async () => {
    expect((await refused({ ...startBody(), more: true })).issues[0].path).toEqual(['more']);
    const nested = variantWith({ profile: { run: 'true', bogus: 1 } });
    expect((await refused(nested)).issues).toEqual([{ _tag: 'Unexpected', path: ['variants', 0, 'profile', 'bogus'], message: expect.any(String) }]);
  });

  it.each(['PATH', 'LD_PRELOAD', 'ASSAY_MODEL', 'NODE_OPTIONS'])('refuses the reserved name %s in a profile env, naming it', async (name) => {
    const issues = (await refused(variantWith({ profile: { run: 'true', env: { FINE: '1', [name]: '/x' } } }))).issues;
    expect(issues).toEqual([{ _tag: 'Refinement', path: ['variants', 0, 'profile', 'env'], message: expect.stringContaining(`"${name}"`) }]);
    expect(issues[0].message).toContain('not reserved');
  });

  it('checks the counts of cases, variants and trials on both sides', async () => {
    const cases = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, verify: 'true', variables: { word: 'x' } }));
    expect((await refused(startBody({ cases: [] }))).issues[0]).toMatchObject({ _tag: 'Refinement', path: ['cases'] });
    expect((await refused(startBody({ cases: cases(101) }))).issues[0]).toMatchObject({ _tag: 'Refinement', path: ['cases'] });
    expect((await refused(startBody({ variants: [] }))).issues[0]).toMatchObject({ _tag: 'Refinement', path: ['variants'] });
    const variants = Array.from({ length: 21 }, (_, i) => ({ harness: 'command', model: `m${i}`, profile: { run: 'true' } }));
    expect((await refused(startBody({ variants }))).issues[0]).toMatchObject({ _tag: 'Refinement', path: ['variants'] });
    for (const trials of [0, 11]) expect((await refused(startBody({ trials }))).issues[0]).toMatchObject({ _tag: 'Refinement', path: ['trials'] });
    expect((await refused(startBody({ trials: 2.5 }))).issues[0]).toMatchObject({ _tag: 'Type', path: ['trials'] });
  });

  it('refuses more than 100 trials in a batch', async () => {
    const cases = Array.from({ length: 11 }, (_, i) => ({ id: `c${i}`, verify: 'true', variables: { word: 'x' } }));
    const body = await refused(startBody({ cases, trials: 10 }));
    expect(body).toEqual({ _tag: 'BadRequest', message: 'A batch may contain at most 100 trials, and this one asks for 110.' });
  });

  it('checks case bounds on both sides: timeoutMs, maxTurns, tags and prepare', async () => {
    const issue = async (fields: Record<string, unknown>) => (await refused(caseWith(fields))).issues[0];
    expect(await issue({ timeoutMs: 999 })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'timeoutMs'] });
    expect(await issue({ timeoutMs: 3600001 })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'timeoutMs'] });
    expect(await issue({ maxTurns: 0 })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'maxTurns'] });
    expect(await issue({ maxTurns: 51 })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'maxTurns'] });
    expect(await issue({ tags: Array.from({ length: 13 }, (_, i) => `t${i}`) })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'tags'] });
    expect(await issue({ tags: ['ok', 'x'.repeat(41)] })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'tags', 1] });
    expect(await issue({ prepare: { name: 'p', source: '' } })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'prepare', 'source'] });
    expect(await issue({ id: 'Not-A-Slug' })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'id'] });
  });

  it('checks user bounds and the user and source unions', async () => {
    const issue = async (fields: Record<string, unknown>) => (await refused(caseWith(fields))).issues[0];
    expect(await issue({ user: { kind: 'robot' } })).toMatchObject({ _tag: 'Composite', path: ['cases', 0, 'user'] });
    expect(await issue({ user: { kind: 'simulated', goal: 'g'.repeat(2001), prompt: 'p' } })).toMatchObject({
      _tag: 'Refinement',
      path: ['cases', 0, 'user', 'goal'],
    });
    expect(await issue({ user: { kind: 'scripted', replies: [] } })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'user', 'replies'] });
    expect(await issue({ user: { kind: 'scripted', replies: Array(25).fill('r') } })).toMatchObject({
      _tag: 'Refinement',
      path: ['cases', 0, 'user', 'replies'],
    });
    expect(await issue({ source: { kind: 'ftp' } })).toMatchObject({ _tag: 'Composite', path: ['cases', 0, 'source'] });
    expect(await issue({ source: { kind: 'repo', url: '', ref: null } })).toMatchObject({ _tag: 'Refinement', path: ['cases', 0, 'source', 'url'] });
    expect(await issue({ source: { kind: 'repo', url: 'x' } })).toMatchObject({ _tag: 'Missing', path: ['cases', 0, 'source', 'ref'] });
  });

  it('refuses a command variant without profile.run, and another harness with one', async () => {
    expect((await refused(variantWith({ profile: { install: 'true' } }))).message).toContain('needs profile.run');
    expect((await refused(variantWith({ harness: 'harness_kind_1' }))).message).toContain('takes no profile.run');
  });

  it('refuses the local sandbox with the message that says where it runs', async () => {
    expect((await refused(variantWith({ sandbox: 'local' }))).message).toContain("The local sandbox runs on your machine: start it with the CLI's local mode.");
  });

  it('refuses two variants with the same identity and two cases with the same id', async () => {
    const variant = { harness: 'command', model: 'm', profile: { run: 'true' } };
    expect((await refused(startBody({ variants: [variant, { ...variant }] }))).message).toContain('are the same variant');
    const named = (run: string) => ({ harness: 'command', model: 'm', profile: { name: 'p', run } });
    expect((await refused(startBody({ variants: [named('a'), named('b')] }))).message).toContain('are the same variant');
    const sameCase = { id: 'dup', verify: 'true', variables: { word: 'x' } };
    expect((await refused(startBody({ cases: [sameCase, { ...sameCase }] }))).message).toContain('Two cases have the id "dup"');
  });

  it('refuses a manifest naming one index twice, and a judge whose threshold no choice reaches', async () => {
    const manifest = [
      { index: 0, name: 'a' },
      { index: 0, name: 'b' },
    ];
    expect((await refused(caseWith({ validator: { name: 'v', source: 'x', manifest } }))).message).toContain('two manifest entries have the index 0');
    const judge = { name: 'j', kind: 'judge', prompt: 'p', choices: { good: 0.4, bad: 0 }, threshold: 0.5 };
    expect((await refused(caseWith({ validator: judge }))).message).toContain('no choice scores 0.5 or more');
    const climbing = { name: 'j', kind: 'judge', prompt: 'p', files: ['../secret'] };
    expect((await refused(caseWith({ validator: climbing }))).message).toContain('must be a relative path');
  });

  it('refuses a simulated user with harness but no model, or model but no harness', async () => {
    const user = { kind: 'simulated', goal: 'g', prompt: 'p' };
    expect((await refused(caseWith({ user: { ...user, harness: 'harness_kind_1' } }))).message).toContain('add its model');
    expect((await refused(caseWith({ user: { ...user, model: 'm' } }))).message).toContain('add its harness');
  });

  it('refuses files source paths that are absolute or climb out', async () => {
    for (const file of ['/etc/passwd', '../outside.txt', 'a/../../b']) {
      expect((await refused(caseWith({ source: { kind: 'files', files: { [file]: 'x' } } }))).message).toContain('must be a relative path');
    }
  });

  it('refuses a placeholder the case does not give', async () => {
    const body = startBody({ cases: [{ id: 'c', verify: 'true', variables: { other: 'x' } }] });
    expect((await refused(body)).message).toBe('The suite prompt uses {{word}}, which case "c" does not give in its variables; add it.');
  });

  it('answers 403 to a key without evals:write and 401 without a key', async () => {
    const reader = await api.call('auth.keys.create', { name: 'reader', permissions: ['evals:read'] });
    expect((await api.withKey(reader.body.key).call('evals.batches.start', startBody())).status).toBe(403);
    expect((await api.withKey(null).call('evals.batches.start', startBody())).status).toBe(401);
  });

  it('refuses an idempotency key over 128 characters', async () => {
    const answer = await api.call('evals.batches.start', startBody(), { headers: { 'idempotency-key': 'k'.repeat(129) } });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('idempotency-key');
  });
});
