import * as fs from 'node:fs';
import * as path from 'node:path';
import { FakeProvider, startFakeProvider } from '../support/fake-provider';
import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { filesUnder, INIT_KEY, InProcessServer, startInProcess, tempDir } from '../support/servers';

const JUDGE_KEY = 'sk-judge-test-key-0123456789';

/** LLM judges for real: the judge form and ctx.judge, through the configured provider (a fake one on 127.0.0.1). */
describe('evals: LLM judges', () => {
  let server: InProcessServer;
  let api: ApiClient;
  let fake: FakeProvider;

  beforeAll(async () => {
    fake = await startFakeProvider();
    const config = path.join(tempDir(), 'assay.yaml');
    fs.writeFileSync(
      config,
      [
        'allowUnsandboxed: true',
        'providers:',
        `  grader: { protocol: openai, baseURL: "${fake.url}", apiKeyEnv: JUDGE_TEST_KEY }`,
        'judges: { provider: grader, model: judge-model }',
        'prices:',
        '  judge-model: { inputPerMTok: 2, outputPerMTok: 10 }',
      ].join('\n'),
    );
    process.env.JUDGE_TEST_KEY = JUDGE_KEY;
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_CONFIG: config });
    api = server.client;
  });

  afterAll(async () => {
    // The judge's key never reaches the event log, the read models' files or the logs.
    for (const file of filesUnder(server.dataDir)) expect({ file, found: fs.readFileSync(file).includes(JUDGE_KEY) }).toEqual({ file, found: false });
    expect(server.logs.lines.join('\n')).not.toContain(JUDGE_KEY);
    await server.close();
    await fake.close();
    delete process.env.JUDGE_TEST_KEY;
  });

  beforeEach(() => {
    fake.requests.length = 0;
  });

  async function judged(validator: Record<string, unknown>, variant?: Record<string, unknown>) {
    const body = startBody({ cases: [{ id: 'c', variables: { word: 'hello' }, validator }], ...(variant ? { variants: [variant] } : {}) });
    const started = await api.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id);
    expect(batch.status).toBe('finished');
    expect(JSON.stringify(batch)).not.toContain(JUDGE_KEY);
    return { run: batch.runs[0], trial: batch.runs[0].trials[0] };
  }

  const rubric = { name: 'kind', kind: 'judge', prompt: 'Did the agent greet the user politely?', files: ['out.txt'] };

  it('passes a trial the judge passes, recording the judgment, its usage and its cost', async () => {
    fake.setDefault({ object: { choice: 'pass', reason: 'It wrote hello.' }, usage: { input: 1000, output: 100 } });
    const { run, trial } = await judged(rubric);
    expect(trial.status).toBe('passed');
    const [record] = trial.validations;
    expect(record).toMatchObject({ index: 1, name: 'kind', kind: 'judge', status: 'passed', message: 'It wrote hello.' });
    expect(record.judgment).toEqual({
      name: 'kind',
      model: 'judge-model',
      evaluator: 'grader',
      score: 1,
      choice: 'pass',
      reason: 'It wrote hello.',
      threshold: 0.5,
      durationMs: expect.any(Number),
      error: null,
      usage: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, totalTokens: 1100, costUsd: 0.003 },
    });
    expect(record.calls).toHaveLength(1);
    expect(record.calls[0]).toMatchObject({ index: 1, method: 'answer', error: { state: 'empty' } });
    expect(JSON.parse(record.calls[0].output.text)).toEqual({ choice: 'pass', score: 1, reason: 'It wrote hello.', passed: true });
    // The judge read the rubric, the conversation and the file, with the server's key, as structured output.
    const [request] = fake.requests;
    expect(request.headers.authorization).toBe(`Bearer ${JUDGE_KEY}`);
    expect(request.body.model).toBe('judge-model');
    const sent = JSON.stringify(request.body.messages);
    expect(sent).toContain('Did the agent greet the user politely?');
    expect(sent).toContain('--- out.txt\\nhello');
    expect(request.body.response_format?.type).toBe('json_schema');
    const judge = trial.costs.components.find((c: any) => c.component === 'judge');
    expect(judge).toMatchObject({ classification: 'judge', usd: 0.003, source: 'grader' });
    expect(trial.costs.estimatedEquivalentUsd).toBeGreaterThanOrEqual(0.003);
    expect(run.setup.validatorFiles).toEqual([{ path: 'kind.judge.json', content: expect.stringContaining('greet the user politely') }]);
  });

  it('fails a trial the judge fails, and scores custom choices against the threshold', async () => {
    fake.setDefault({ object: { choice: 'fail', reason: 'Rude.' } });
    const failed = await judged(rubric);
    expect(failed.trial.status).toBe('failed');
    expect(failed.trial.validations[0]).toMatchObject({ status: 'failed', judgment: { choice: 'fail', score: 0, reason: 'Rude.' } });
    expect(failed.trial.failure).toBe('validation "kind" failed: Rude.');
    fake.setDefault({ object: { choice: 'okay', reason: 'Fine.' } });
    const graded = await judged({ ...rubric, model: 'other-model', choices: { great: 1, okay: 0.6, bad: 0 }, threshold: 0.7 });
    expect(graded.trial.status).toBe('failed');
    expect(graded.trial.validations[0].judgment).toMatchObject({ model: 'other-model', choice: 'okay', score: 0.6, threshold: 0.7 });
    expect(fake.requests.at(-1)?.body.model).toBe('other-model');
    expect(JSON.stringify(fake.requests.at(-1)?.body.response_format)).toContain('"great","okay","bad"');
  });

  it('voids the trial when the judge answers outside the choices', async () => {
    fake.setDefault({ object: { choice: 'maybe', reason: 'Unsure.' } });
    const { trial } = await judged(rubric);
    expect(trial.status).toBe('void');
    expect(trial.voidFields).toEqual(['validator']);
    expect(trial.failure).toContain('validator "kind" could not be judged: the judge answered outside the choices (pass, fail)');
    expect(trial.validations[0]).toMatchObject({
      status: 'error',
      judgment: { choice: null, score: null, error: expect.stringContaining('outside the choices') },
    });
  });

  it('voids the trial when the judge provider answers 500', async () => {
    fake.setDefault({ status: 500, error: 'the grader is down' });
    const { trial } = await judged(rubric);
    expect(trial.status).toBe('void');
    expect(trial.failure).toContain('validator "kind" could not be judged: provider "grader" (openai) answered HTTP 500');
    expect(trial.validations[0].calls[0].error.text).toContain('HTTP 500');
  });

  it('answers ctx.judge from a code validator: a call and a judgment are recorded', async () => {
    fake.setDefault({ object: { choice: 'good', reason: 'Greets.' }, usage: { input: 50, output: 5 } });
    const source = `
      import type { ValidatorContext } from 'assay/validator';
      export async function review(ctx: ValidatorContext) {
        const verdict = await ctx.judge({ prompt: 'Is the greeting good?', choices: { good: 1, bad: 0 }, files: ['out.txt', 'missing.txt'] });
        ctx.log('judge said', verdict.choice);
        return { passed: verdict.passed && verdict.score === 1, message: verdict.reason };
      }`;
    const { trial } = await judged({ name: 'review', source });
    expect(trial.status).toBe('passed');
    const [record] = trial.validations;
    expect(record).toMatchObject({ kind: 'code', status: 'passed', message: 'Greets.' });
    expect(record.calls).toEqual([
      {
        index: 1,
        method: 'answer',
        startedAt: expect.any(Number),
        durationMs: expect.any(Number),
        input: expect.objectContaining({ format: 'json', state: 'captured' }),
        output: expect.objectContaining({ format: 'json', state: 'captured' }),
        error: { text: '', format: 'text', state: 'empty', truncated: false },
      },
    ]);
    expect(JSON.parse(record.calls[0].input.text)).toMatchObject({ prompt: 'Is the greeting good?', files: ['out.txt', 'missing.txt'] });
    expect(record.judgment).toMatchObject({ name: 'review', model: 'judge-model', choice: 'good', score: 1, usage: { inputTokens: 50, outputTokens: 5 } });
    expect(record.logs[0].value.text).toBe('judge said good');
    expect(JSON.stringify(fake.requests[0].body.messages)).toContain('missing.txt (not found: ENOENT)');
  });

  it('never shows the judge a value of the organization that the agent wrote out', async () => {
    const token = 'org-secret-token-9876543210';
    expect((await api.call('environment.set', { variables: [{ name: 'TOKEN', value: token }] })).status).toBe(200);
    fake.setDefault({ object: { choice: 'pass', reason: 'Fine.' } });
    const leaky = { harness: 'command', model: 'm', profile: { run: 'echo "hello $TOKEN" > out.txt; echo "my token is $TOKEN"' } };
    const { trial } = await judged(rubric, leaky);
    expect(trial.status).toBe('passed');
    const sent = JSON.stringify(fake.requests[0].body);
    expect(sent).toContain('hello [redacted]');
    expect(sent).not.toContain(token);
  });
});
