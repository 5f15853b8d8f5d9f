import { startBody, waitForBatch } from '../support/evals';
import { acmeServerPerSuite } from '../support/servers';

/** A code validator's source as written, beside its bundle: kept with the run, its bounds checked on both sides. */
describe("a validator's source as written", () => {
  const suite = acmeServerPerSuite();
  const MODULE = 'export function check(context) {\n  return { status: "passed" };\n}\n';

  const withWritten = (written: unknown) =>
    startBody({
      cases: [{ id: 'written', variables: { word: 'hello' }, verify: 'true', validator: { name: 'check', source: MODULE, written } }],
    });

  it("is kept as the run's validator file; the bundle is what ran", async () => {
    const written = {
      path: 'checks/check.ts',
      content: '// as written, with its comments\nexport function check(context: unknown) { return { status: "passed" }; }\n',
    };
    const started = await suite.api.call('evals.batches.start', withWritten(written));
    expect(started.status).toBe(200);
    const batch = await waitForBatch(suite.api, started.body.id);
    expect(batch.runs[0].setup.validatorFiles).toEqual([written]);
    expect(batch.runs[0].setup.validator).toBe(MODULE);
  });

  it.each([
    ['an empty path', 400, { path: '', content: 'x' }],
    ['a path of 501 characters', 400, { path: 'p'.repeat(501), content: 'x' }],
    ['a path of 500 characters', 200, { path: 'p'.repeat(500), content: 'x' }],
    ['empty content', 400, { path: 'a.ts', content: '' }],
    ['no content', 400, { path: 'a.ts' }],
    ['an unknown key', 400, { path: 'a.ts', content: 'x', lines: 1 }],
  ])('%s: %i', async (_label, status, written) => {
    const answer = await suite.api.call('evals.batches.start', withWritten(written));
    expect(answer.status).toBe(status);
    if (status === 400) expect(JSON.stringify(answer.body)).toContain('written');
    else await waitForBatch(suite.api, answer.body.id);
  });
});
