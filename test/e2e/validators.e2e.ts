import * as fs from 'node:fs';
import { describeWithBubblewrap } from '../support/bubblewrap';
import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/** Code validators run for real: TypeScript transpiled by the server, Node in the trial's sandbox (bubblewrap here). */
describe('evals: code validators judge trials', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_VALIDATOR_TIMEOUT_MS: '5000' });
    api = server.client;
  });

  afterAll(() => server.close());

  /** Runs one case whose agent writes `hello` to out.txt, judged by `validator`; answers the batch and the trial. */
  async function judged(validator: Record<string, unknown>, caseFields: Record<string, unknown> = {}) {
    const body = startBody({ cases: [{ id: 'c', variables: { word: 'hello' }, verify: null, validator, ...caseFields }] });
    const started = await api.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id);
    return { batch, run: batch.runs[0], trial: batch.runs[0].trials[0] };
  }

  const readsOut = (expected: string) => `
    import type { ValidatorContext } from 'assay/validator';
    export async function check(ctx: ValidatorContext) {
      const text: string = ctx.workspace.readFile('out.txt');
      ctx.log('read', text.length, 'characters');
      return { passed: text.trim() === ${JSON.stringify(expected)}, score: 0.75, message: 'out.txt holds ' + text.trim(), metadata: { files: ctx.workspace.listFiles() } };
    }`;

  it('passes a trial when the validator reads the file the agent wrote and accepts it', async () => {
    const { batch, run, trial } = await judged({ name: 'check', source: readsOut('hello') });
    expect(batch.status).toBe('finished');
    expect(trial.status).toBe('passed');
    expect(trial.verifySteps).toEqual([]);
    expect(trial.validations).toHaveLength(1);
    const [record] = trial.validations;
    expect(record).toMatchObject({
      id: expect.stringMatching(/^val_/),
      index: 1,
      name: 'check',
      kind: 'code',
      status: 'passed',
      message: 'out.txt holds hello',
      exitCode: 0,
      truncated: false,
      input: { state: 'omitted' },
      error: { state: 'empty' },
      calls: [],
      judgment: null,
    });
    expect(typeof record.startedAt).toBe('number');
    expect(record.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.parse(record.metadata.text)).toEqual({ files: ['out.txt', 'prompt.txt'] });
    expect(record.logs).toEqual([
      { index: 1, at: expect.any(Number), level: 'log', value: { text: 'read 6 characters', format: 'text', state: 'captured', truncated: false } },
    ]);
    expect(run.setup.validator).toContain('export async function check');
    expect(run.setup.validatorFiles).toEqual([{ path: 'check.ts', content: expect.stringContaining('ctx.workspace.readFile') }]);
  });

  it('fails a trial when the validator rejects what the agent wrote', async () => {
    const { trial } = await judged({ name: 'check', source: readsOut('goodbye') });
    expect(trial.status).toBe('failed');
    expect(trial.validations[0]).toMatchObject({ status: 'failed', message: 'out.txt holds hello' });
    expect(trial.failure).toBe('validation "check" failed: out.txt holds hello');
  });

  it('accepts a bare boolean, and runs verify too when both are given: both must pass', async () => {
    const yes = { name: 'yes', source: 'export const yes = () => true;' };
    const both = await judged(yes, { verify: 'grep -q hello out.txt' });
    expect(both.trial.status).toBe('passed');
    expect(both.trial.verifySteps).toEqual([{ command: 'grep -q hello out.txt', exitCode: 0 }]);
    expect(both.trial.validations[0].status).toBe('passed');
    const verifyFails = await judged(yes, { verify: 'grep -q nothing out.txt' });
    expect(verifyFails.trial.status).toBe('failed');
    expect(verifyFails.trial.validations[0].status).toBe('passed');
    const no = await judged({ name: 'no', source: 'export function no() { return false; }' }, { verify: 'true' });
    expect(no.trial.status).toBe('failed');
  });

  it('records one validation per manifest entry, with the manifest names and 1-based indexes', async () => {
    const source = `export function checks(ctx) {
      const text = ctx.workspace.readFile('out.txt');
      return [true, { passed: text.includes('hello'), message: 'greets' }, { passed: false, score: 0, message: 'no tests' }];
    }`;
    const manifest = [
      { index: 0, name: 'compiles' },
      { index: 1, name: 'greets' },
      { index: 2, name: 'has tests' },
    ];
    const { trial } = await judged({ name: 'checks', source, manifest });
    expect(trial.validations.map((v: any) => [v.index, v.name, v.status])).toEqual([
      [1, 'compiles', 'passed'],
      [2, 'greets', 'passed'],
      [3, 'has tests', 'failed'],
    ]);
    expect(trial.status).toBe('failed');
    expect(trial.failure).toBe('validation "has tests" failed: no tests');
  });

  it('voids the trial when the validator throws, naming it, and the batch still finishes', async () => {
    const source = `export function boom(ctx) { ctx.workspace.readFile('missing.txt'); return true; }`;
    const { batch, run, trial } = await judged({ name: 'boom', source });
    expect(batch.status).toBe('finished');
    expect(run.status).toBe('finished');
    expect(trial.status).toBe('void');
    expect(trial.voidFields).toEqual(['validator']);
    expect(trial.failure).toMatch(/^validator "boom" threw: ENOENT/);
    expect(trial.validations[0]).toMatchObject({ status: 'error', exitCode: 1, error: { state: 'captured' } });
    expect(trial.validations[0].error.text).toContain('ENOENT');
  });

  it('voids the trial when the validator never answers: it is killed at ASSAY_VALIDATOR_TIMEOUT_MS', async () => {
    const { trial } = await judged({ name: 'spin', source: 'export function spin() { for (;;) {} }' });
    expect(trial.status).toBe('void');
    expect(trial.failure).toBe('validator "spin" timed out after 5000 ms');
    expect(trial.validations[0]).toMatchObject({ status: 'error', exitCode: null });
  });

  it('voids the trial when the validator writes garbage to the protocol, exits early, or does not compile', async () => {
    const garbage = await judged({
      name: 'noisy',
      source: `import { writeSync } from 'node:fs'; export function noisy() { writeSync(1, 'not json\\n'); return true; }`,
    });
    expect(garbage.trial.status).toBe('void');
    expect(garbage.trial.failure).toBe('validator "noisy" wrote something that is not the protocol to stdout: "not json"');
    const early = await judged({ name: 'quits', source: 'export function quits() { process.exit(3); }' });
    expect(early.trial.failure).toBe('validator "quits" exited with code 3 before answering');
    const broken = await judged({ name: 'broken', source: 'export function broken( {' });
    expect(broken.trial.failure).toMatch(/^validator "broken" does not compile: /);
    const missing = await judged({ name: 'absent', source: 'export function present() { return true; }' });
    expect(missing.trial.failure).toBe('validator "absent" threw: the module exports no function named "absent" (it exports present)');
    const wrong = await judged({ name: 'odd', source: 'export function odd() { return 42; }' });
    expect(wrong.trial.failure).toContain('validator "odd" returned a number; return true, false or');
  });

  it('cuts the captures of a validator that prints 1 MB, head and tail, and says so', async () => {
    const source = `export function loud(ctx) {
      console.log('start' + 'x'.repeat(1024 * 1024) + 'end');
      for (let i = 0; i < 100; i += 1) ctx.log('line', i);
      return { passed: true, metadata: { big: 'y'.repeat(100000) } };
    }`;
    const { trial } = await judged({ name: 'loud', source });
    expect(trial.failure).toBeNull();
    expect(trial.status).toBe('passed');
    const [record] = trial.validations;
    expect(record.truncated).toBe(true);
    expect(record.logs).toHaveLength(64);
    const printed = record.logs[0];
    expect(printed.level).toBe('stdout');
    expect(printed.value.truncated).toBe(true);
    expect(printed.value.text.length).toBeLessThanOrEqual(16_100);
    expect(printed.value.text.startsWith('startxxx')).toBe(true);
    expect(printed.value.text.trimEnd().endsWith('xxxend')).toBe(true);
    expect(record.logs[63].value.text).toBe('line 62');
    expect(record.metadata).toMatchObject({ format: 'text', state: 'captured', truncated: true });
    expect(record.metadata.text.length).toBeLessThanOrEqual(16_100);
  });

  it('keeps input and output captures, up to 64,000 characters, with capture: true', async () => {
    const source = `export function full(ctx) { return { passed: ctx.prompt === 'Write hello into out.txt' && ctx.finalMessage !== undefined, message: 'z'.repeat(10) }; }`;
    const { trial } = await judged({ name: 'full', source, capture: true });
    const [record] = trial.validations;
    expect(record.status).toBe('passed');
    expect(record.input).toMatchObject({ format: 'json', state: 'captured', truncated: false });
    const input = JSON.parse(record.input.text);
    expect(input).toMatchObject({ prompt: 'Write hello into out.txt', variables: { word: 'hello' } });
    expect(input.conversation[0]).toEqual({ role: 'user', text: 'Write hello into out.txt' });
    expect(JSON.parse(record.output.text)).toEqual({ passed: true, message: 'zzzzzzzzzz' });
  });
});

/** The validator runs as the trial does: no data directory, no network, no organization values. */
describeWithBubblewrap('evals: a validator under bubblewrap', () => {
  let server: InProcessServer;
  let api: ApiClient;
  const TOKEN = 'org-token-value-0123456789';

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
  });

  afterAll(() => server.close());

  it('cannot read the data directory, reach the network or see the organization variables', async () => {
    expect((await api.call('environment.set', { variables: [{ name: 'TOKEN', value: TOKEN }] })).status).toBe(200);
    expect(fs.readdirSync(server.dataDir).length).toBeGreaterThan(0);
    const port = new URL(server.url).port;
    const source = `
      import * as fs from 'node:fs';
      import * as net from 'node:net';
      export async function probe(ctx) {
        let data;
        try { data = fs.readdirSync(${JSON.stringify(server.dataDir)}); } catch (error) { data = error.code; }
        const network = await new Promise((resolve) => {
          const socket = net.connect(${port}, '127.0.0.1', () => { socket.destroy(); resolve('connected'); });
          socket.on('error', (error) => resolve(error.code));
        });
        const agentSaw = ctx.workspace.exec('cat token.txt').stdout.trim();
        return { passed: true, metadata: { data, network, env: Object.keys(process.env).sort(), token: process.env.TOKEN ?? null, agentSaw } };
      }`;
    const body = startBody({
      cases: [{ id: 'c', variables: { word: 'hello' }, validator: { name: 'probe', source } }],
      variants: [{ harness: 'command', model: 'm', profile: { run: 'echo "$TOKEN" > token.txt' } }],
    });
    const started = await api.call('evals.batches.start', body);
    const batch = await waitForBatch(api, started.body.id);
    const trial = batch.runs[0].trials[0];
    expect(trial.status).toBe('passed');
    const seen = JSON.parse(trial.validations[0].metadata.text);
    // The data directory is absent or covered by an empty mount; the sandbox has no network but its own loopback (down).
    expect([[], 'ENOENT']).toContainEqual(seen.data);
    expect(seen.network).not.toBe('connected');
    expect(seen.token).toBeNull();
    expect(seen.env).toEqual(expect.arrayContaining(['HOME', 'PATH', 'TMPDIR']));
    expect(seen.env.filter((name: string) => !['HOME', 'LANG', 'LOGNAME', 'PATH', 'PWD', 'TMPDIR', 'USER'].includes(name))).toEqual([]);
    // The agent had the variable (it is the organization's); what the validator read back of it is redacted.
    expect(seen.agentSaw).toBe('[redacted]');
    expect(JSON.stringify(batch)).not.toContain(TOKEN);
  });
});
