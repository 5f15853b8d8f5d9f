import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/**
 * Every bound of a case's validator (both forms), manifest and prepare, on both sides: one past
 * it is a 400 in the spec's error shape with the issue at its path, storing nothing; at it, the
 * start is accepted.
 */
describe('evals.batches.start: the bounds of validator, manifest, judge form and prepare', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  const body = (fields: Record<string, unknown>, prompt = 'Write {{word}} into out.txt') =>
    startBody({ suite: { id: 'bounds', prompt }, cases: [{ id: 'c', variables: { word: 'x' }, ...fields }] });

  async function issue(fields: Record<string, unknown>, prompt?: string) {
    const before = await server.runtime.eventStore.headPosition();
    const answer = await api.call('evals.batches.start', body(fields, prompt));
    expect(answer.status).toBe(400);
    // The spec's error shape: a decode error with its issues, or a rule's BadRequest with its message.
    if (answer.body._tag === 'HttpApiDecodeError') expect(answer.body.issues.length).toBeGreaterThan(0);
    else expect(answer.body).toEqual({ _tag: 'BadRequest', message: expect.any(String) });
    expect(await server.runtime.eventStore.headPosition()).toBe(before);
    return answer.body.issues?.[0] ?? { message: answer.body.message };
  }

  async function accepted(fields: Record<string, unknown>, prompt?: string) {
    const answer = await api.call('evals.batches.start', body(fields, prompt));
    expect(answer.body).toMatchObject({ id: expect.stringMatching(/^bat_/) });
    expect(answer.status).toBe(200);
    // At most 3 batches run at once: each is let finish before the next start.
    await waitForBatch(api, answer.body.id);
  }

  const at = (...path: Array<string | number>) => ['cases', 0, ...path];
  const code = (fields: Record<string, unknown>) => ({ validator: { name: 'check', source: 'export const check = () => true;', ...fields } });
  const judge = (fields: Record<string, unknown>) => ({ validator: { name: 'j', kind: 'judge', prompt: 'Polite?', ...fields } });

  it('bounds the first form: name 1 to 200, source 1 to 1,000,000, capture a boolean, no unknown properties', async () => {
    expect(await issue(code({ name: '' }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'name') });
    expect(await issue(code({ name: 'n'.repeat(201) }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'name') });
    expect(await issue(code({ source: '' }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'source') });
    expect(await issue(code({ source: 'x'.repeat(1_000_001) }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'source') });
    expect(await issue(code({ capture: 'yes' }))).toMatchObject({ _tag: 'Type', path: at('validator', 'capture') });
    expect(await issue(code({ extra: 1 }))).toMatchObject({ _tag: 'Unexpected', path: at('validator', 'extra') });
    expect(await issue(code({ kind: 'lint' }))).toMatchObject({ path: at('validator', 'kind') });
    expect(await issue({ validator: { source: 'x' } })).toMatchObject({ _tag: 'Missing', path: at('validator', 'name') });
    await accepted(code({ name: 'n'.repeat(200), source: `export const x = 1;${' '.repeat(1_000_000 - 19)}`, capture: true }));
    await accepted(code({ name: 'c' }));
  });

  it('bounds the manifest: 1 to 20 entries, index a non-negative integer, name at most 200', async () => {
    const entries = (n: number) => Array.from({ length: n }, (_, index) => ({ index, name: `check ${index}` }));
    expect(await issue(code({ manifest: [] }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'manifest') });
    expect(await issue(code({ manifest: entries(21) }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'manifest') });
    expect(await issue(code({ manifest: [{ index: -1, name: 'a' }] }))).toMatchObject({ path: at('validator', 'manifest', 0, 'index') });
    expect(await issue(code({ manifest: [{ index: 1.5, name: 'a' }] }))).toMatchObject({ path: at('validator', 'manifest', 0, 'index') });
    expect(await issue(code({ manifest: [{ index: 0, name: 'n'.repeat(201) }] }))).toMatchObject({ path: at('validator', 'manifest', 0, 'name') });
    expect(await issue(code({ manifest: [{ index: 0, name: 'a', weight: 2 }] }))).toMatchObject({
      _tag: 'Unexpected',
      path: at('validator', 'manifest', 0, 'weight'),
    });
    await accepted(code({ manifest: entries(20) }));
    await accepted(code({ manifest: [{ index: 0, name: 'n'.repeat(200) }] }));
    await accepted(code({ manifest: [{ index: 0, name: '' }] }));
  });

  it('bounds the judge form: prompt 1 to 8000, model 1 to 200, choices, threshold 0 to 1, at most 20 files, no unknown properties', async () => {
    const choices = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`c${i}`, i === 0 ? 1 : 0]));
    expect(await issue(judge({ prompt: '' }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'prompt') });
    expect(await issue(judge({ prompt: 'p'.repeat(8001) }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'prompt') });
    expect(await issue(judge({ model: '' }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'model') });
    expect(await issue(judge({ model: 'm'.repeat(201) }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'model') });
    expect(await issue(judge({ choices: {} }))).toMatchObject({ path: at('validator', 'choices'), message: 'Expected 1 to 20 choices, actual 0' });
    expect(await issue(judge({ choices: choices(21) }))).toMatchObject({ path: at('validator', 'choices'), message: 'Expected 1 to 20 choices, actual 21' });
    expect(await issue(judge({ choices: { ['l'.repeat(101)]: 1 } }))).toMatchObject({ path: at('validator', 'choices') });
    expect(await issue(judge({ choices: { pass: 1.5 } }))).toMatchObject({
      path: at('validator', 'choices'),
      message: 'The score of "pass" must be a number from 0 to 1',
    });
    expect(await issue(judge({ choices: { pass: -0.1 } }))).toMatchObject({ path: at('validator', 'choices') });
    expect(await issue(judge({ threshold: -0.01 }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'threshold') });
    expect(await issue(judge({ threshold: 1.01 }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'threshold') });
    expect(await issue(judge({ files: [] }))).toMatchObject({ _tag: 'Refinement', path: at('validator', 'files') });
    expect(await issue(judge({ files: Array.from({ length: 21 }, (_, i) => `f${i}`) }))).toMatchObject({ path: at('validator', 'files') });
    expect(await issue(judge({ files: ['ok', ''] }))).toMatchObject({ path: at('validator', 'files', 1) });
    expect(await issue(judge({ source: 'export const j = () => true;' }))).toMatchObject({ _tag: 'Unexpected', path: at('validator', 'source') });
    expect(await issue(judge({ capture: true }))).toMatchObject({ _tag: 'Unexpected', path: at('validator', 'capture') });
    expect(await issue({ validator: { name: 'j', kind: 'judge' } })).toMatchObject({ _tag: 'Missing', path: at('validator', 'prompt') });
    await accepted(
      judge({ prompt: 'p'.repeat(8000), model: 'm'.repeat(200), choices: choices(20), threshold: 1, files: Array.from({ length: 20 }, (_, i) => `f${i}`) }),
    );
    await accepted(judge({ prompt: 'p', model: 'm', choices: { ['l'.repeat(100)]: 0 }, threshold: 0, files: ['f'] }));
  });

  it('bounds prepare: name 1 to 100, source 1 to 1,000,000; {{prepare.key}} is refused only without a prepare', async () => {
    const prepare = (fields: Record<string, unknown>) => ({ prepare: { name: 'p', source: 'export const p = () => ({});', ...fields }, verify: 'true' });
    expect(await issue(prepare({ name: '' }))).toMatchObject({ _tag: 'Refinement', path: at('prepare', 'name') });
    expect(await issue(prepare({ name: 'n'.repeat(101) }))).toMatchObject({ _tag: 'Refinement', path: at('prepare', 'name') });
    expect(await issue(prepare({ source: 'x'.repeat(1_000_001) }))).toMatchObject({ _tag: 'Refinement', path: at('prepare', 'source') });
    expect(await issue(prepare({ extra: true }))).toMatchObject({ _tag: 'Unexpected', path: at('prepare', 'extra') });
    await accepted(prepare({ name: 'n'.repeat(100), source: `export const p = () => ({});${' '.repeat(1_000_000 - 28)}` }));
    const withPlaceholder = 'Use {{prepare.ticket}} for {{word}}';
    expect((await issue({ verify: 'true' }, withPlaceholder)).message).toBe(
      'The suite prompt uses {{prepare.ticket}}, which case "c" does not give in its variables; add it.',
    );
    await accepted(prepare({}), withPlaceholder);
  });
});
