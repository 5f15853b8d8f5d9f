import { MAX_BODY_DEPTH } from '#infrastructure/http/decode/body-shape';
import type { Answer } from '../support/http-client';
import { acmeServerPerSuite } from '../support/servers';

/** `{"id": [[...]]}`: the body object, then `levels - 1` arrays, so the body nests `levels` deep. */
function nestedIdBody(levels: number): string {
  return `{"id":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
}

function expectIssues(answer: Answer, issues: Array<{ _tag: string; path: Array<string | number> }>): void {
  expect(answer.status).toBe(400);
  expect(answer.body._tag).toBe('HttpApiDecodeError');
  expect(answer.body.issues.map(({ _tag, path }: { _tag: string; path: unknown[] }) => ({ _tag, path }))).toEqual(issues);
  for (const issue of answer.body.issues) expect(issue.message).toEqual(expect.any(String));
}

describe('bodies no schema can take, over real HTTP', () => {
  const suite = acmeServerPerSuite();

  it('refuses a "constructor" key at any depth with 400, naming its path (it used to crash the decoder: 500)', async () => {
    expectIssues(await suite.api.call('evals.batches.get', undefined, { rawBody: '{"id":{"constructor":5}}' }), [
      { _tag: 'Unexpected', path: ['id', 'constructor'] },
    ]);
    expectIssues(await suite.api.call('evals.cases.list', undefined, { rawBody: '{"q":"x","extra":[1,{"constructor":{}}]}' }), [
      { _tag: 'Unexpected', path: ['extra', 1, 'constructor'] },
    ]);
    // Written with an escape, the key is the same once parsed.
    expectIssues(await suite.api.call('evals.batches.get', undefined, { rawBody: '{"id":"x","\\u0063onstructor":1}' }), [
      { _tag: 'Unexpected', path: ['constructor'] },
    ]);
  });

  it('refuses "__proto__" keys too, every one of them, in document order', async () => {
    const answer = await suite.api.call('environment.set', undefined, {
      rawBody: '{"variables":[{"name":"A","value":"x","__proto__":{"secret":false}},{"name":"B","value":"y","constructor":"z"}]}',
    });
    expectIssues(answer, [
      { _tag: 'Unexpected', path: ['variables', 0, '__proto__'] },
      { _tag: 'Unexpected', path: ['variables', 1, 'constructor'] },
    ]);
    expect((await suite.api.call('environment.list', {})).body).toEqual([]);
  });

  it(`takes a body nested ${MAX_BODY_DEPTH} levels to the schema, and refuses one level more before decoding`, async () => {
    const atLimit = await suite.api.call('evals.batches.get', undefined, { rawBody: nestedIdBody(MAX_BODY_DEPTH) });
    expectIssues(atLimit, [{ _tag: 'Type', path: ['id'] }]);
    const overLimit = await suite.api.call('evals.batches.get', undefined, { rawBody: nestedIdBody(MAX_BODY_DEPTH + 1) });
    expectIssues(overLimit, [{ _tag: 'Refinement', path: ['id', ...Array(MAX_BODY_DEPTH - 1).fill(0)] }]);
    expect(overLimit.body.issues[0].message).toContain(`deeper than ${MAX_BODY_DEPTH} levels`);
  });

  it('answers 400, not 500, to a body nested a hundred thousand levels deep', async () => {
    const answer = await suite.api.call('evals.batches.get', undefined, { rawBody: nestedIdBody(100_000) });
    expect(answer.status).toBe(400);
    expect(answer.body.issues).toHaveLength(1);
    expect(suite.server.logs.entries().filter((entry) => entry.level === 'error')).toEqual([]);
  });

  it('still answers an ordinary body: a batch that does not exist is a 404', async () => {
    const answer = await suite.api.call('evals.batches.get', { id: 'bat_missing' });
    expect({ status: answer.status, tag: answer.body._tag }).toEqual({ status: 404, tag: 'NotFound' });
  });
});
