import { ApiClient } from '../support/http-client';
import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';

/** A case's prepare runs in the sandbox before the first agent turn: it writes files and fills `{{prepare.key}}`. */
describe('evals: prepare sets up the workspace and the prompt', () => {
  let server: InProcessServer;
  let api: ApiClient;

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_VALIDATOR_TIMEOUT_MS: '5000' });
    api = server.client;
  });

  afterAll(() => server.close());

  async function prepared(prepare: Record<string, unknown>) {
    const body = startBody({
      suite: { id: 'prep', prompt: 'Copy the {{prepare.kind}} file for {{word}}' },
      cases: [
        { id: 'c', variables: { word: 'hello' }, prepare, verify: 'grep -q "secret-42" answer.txt && grep -q "Copy the ticket file for hello" prompt.txt' },
      ],
      variants: [{ harness: 'command', model: 'm', profile: { run: 'echo "$ASSAY_PROMPT" > prompt.txt; cat task/ticket.txt > answer.txt' } }],
    });
    const started = await api.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    const batch = await waitForBatch(api, started.body.id);
    return { batch, run: batch.runs[0], trial: batch.runs[0].trials[0] };
  }

  it('writes a file the agent reads and returns a variable the opening prompt uses', async () => {
    const source = `
      import type { PrepareContext } from 'assay/validator';
      export async function setUp(ctx: PrepareContext) {
        ctx.workspace.writeFile('task/ticket.txt', 'secret-' + (40 + Number(ctx.variables.word.length) - 3) + '\\n');
        const listed = ctx.workspace.listFiles();
        const shell = ctx.workspace.exec('cat task/ticket.txt');
        return { kind: 'ticket', listed, shell: shell.stdout.trim(), count: 2 };
      }`;
    const { run, trial } = await prepared({ name: 'setUp', source });
    expect(trial.failure).toBeNull();
    expect(trial.status).toBe('passed');
    const entry = trial.trajectory.find((e: any) => e._tag === 'prepare');
    expect(entry).toEqual({
      _tag: 'prepare',
      name: 'setUp',
      durationMs: expect.any(Number),
      result: { kind: 'ticket', listed: ['task/ticket.txt'], shell: 'secret-42', count: 2 },
    });
    expect(trial.trajectory[0]).toBe(trial.trajectory.find((e: any) => e._tag === 'prepare'));
    expect(trial.sandboxMs).toBeGreaterThanOrEqual(entry.durationMs);
    // The prepare's files are set-up, not the agent's doing.
    expect(trial.filesChanged).toEqual(['answer.txt', 'prompt.txt']);
    expect(run.setup.prepare).toBe(source);
    expect(run.setup.prompt).toBe('Copy the {{prepare.kind}} file for hello');
  });

  it('voids the trial, before the agent runs, when the prepare throws', async () => {
    const { batch, trial } = await prepared({ name: 'setUp', source: 'export function setUp() { throw new Error("no fixtures today"); }' });
    expect(batch.status).toBe('finished');
    expect(trial.status).toBe('void');
    expect(trial.voidFields).toEqual(['prepare']);
    expect(trial.failure).toBe('prepare "setUp" threw: no fixtures today');
    expect(trial.trajectory).toEqual([]);
  });

  it('voids the trial when the prepare answers too much, or not an object, or cannot write outside the workspace', async () => {
    const large = await prepared({ name: 'p', source: 'export const p = () => ({ kind: "x".repeat(16000) });' });
    expect(large.trial.failure).toBe('prepare "p" returned 16011 characters of JSON; at most 16000 are allowed');
    const atLimit = await prepared({
      name: 'p',
      source: 'export const p = (ctx) => { ctx.workspace.writeFile("task/ticket.txt", "secret-42"); return { kind: "ticket", pad: "x".repeat(16000 - 26) }; };',
    });
    expect(atLimit.trial.failure).toBeNull();
    expect(JSON.stringify(atLimit.trial.trajectory[0].result)).toHaveLength(16000);
    expect(atLimit.trial.status).toBe('passed');
    const array = await prepared({ name: 'p', source: 'export const p = () => [1];' });
    expect(array.trial.failure).toBe('prepare "p" returned an array; return a JSON object or nothing');
    const climbing = await prepared({ name: 'p', source: 'export const p = (ctx) => ctx.workspace.writeFile("../escape.txt", "x");' });
    expect(climbing.trial.failure).toBe('prepare "p" threw: "../escape.txt" is not a path inside the workspace');
  });
});
