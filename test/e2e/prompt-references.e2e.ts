import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startBody, waitForBatch } from '../support/evals';
import type { Answer, ApiClient } from '../support/http-client';
import { CLI, INIT_KEY, InProcessServer, startInProcess, tempDir } from '../support/servers';

const ID = 'support/greeting';
/** The agent writes what it was asked into out.txt: the test reads the prompt the trial got. */
const ECHO = { harness: 'command', model: 'none', profile: { run: 'echo "$ASSAY_PROMPT" > out.txt' } };
const FIX = 'write {{prompt:ID@VERSION}} (a version, e.g. {{prompt:greeting@3}}) or {{prompt:ID@CHANNEL}}';

function expectBadRequest(answer: Answer, text: string): void {
  expect({ status: answer.status, tag: answer.body?._tag }).toEqual({ status: 400, tag: 'BadRequest' });
  expect(answer.body.message).toContain(text);
}

/**
 * `{{prompt:ID@N}}` and `{{prompt:ID@CHANNEL}}` in a suite prompt, over real HTTP and from the
 * CLI: a channel is resolved when the batch starts, to the version it points at then, and
 * recorded as `ID@N` in each run's setup (and in BatchStarted, for evidence-gated promotion);
 * any other `{{prompt:…}}` is refused with 400 naming the fix, never sent to the agent.
 */
describe('prompt references in a suite prompt', () => {
  let server: InProcessServer;
  let api: ApiClient;

  const start = (prompt: string) =>
    api.call('evals.batches.start', startBody({ suite: { id: 'greet', prompt }, cases: [{ id: 'greets', verify: 'grep -q . out.txt' }], variants: [ECHO] }));
  const ran = async (prompt: string) => {
    const started = await start(prompt);
    expect(started.status).toBe(200);
    return waitForBatch(api, started.body.id);
  };
  const promptOf = async (batch: any) => ({ setup: (await api.call('evals.runs.get', { id: batch.runs[0].id })).body.setup });

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
    api = server.client;
    for (const content of ['Hello, version one.', 'Hello, version two.', 'Hello, version three.']) {
      expect((await api.call('prompts.versions.create', { id: ID, content })).status).toBe(200);
    }
    expect((await api.call('prompts.promote', { id: ID, channel: 'production', version: 2 })).status).toBe(200);
  });
  afterAll(() => server.close());

  it('resolves a channel at start to its version, records it as ID@N, and a later promotion changes only later batches', async () => {
    const first = await ran(`{{prompt:${ID}@production}} Be brief.`);
    expect(first.status).toBe('finished');
    const { setup } = await promptOf(first);
    expect(setup.prompt).toBe('Hello, version two. Be brief.');
    expect(setup.prompts).toEqual([{ prompt: `${ID}@2`, channel: 'production' }]);
    const started = (await api.call('audit.events.list', { stream: `batch-${first.id}`, type: 'BatchStarted' })).body.events[0];
    expect(started.data.prompts).toEqual([{ promptId: ID, version: 2, channel: 'production' }]);
    expect(first.runs[0].trials[0].status).toBe('passed');

    expect((await api.call('prompts.promote', { id: ID, channel: 'production', version: 3 })).status).toBe(200);
    const second = await ran(`{{prompt:${ID}@production}} Be brief.`);
    expect((await promptOf(second)).setup).toMatchObject({
      prompt: 'Hello, version three. Be brief.',
      prompts: [{ prompt: `${ID}@3`, channel: 'production' }],
    });
    // The first batch still says what it ran.
    expect((await promptOf(first)).setup.prompts).toEqual([{ prompt: `${ID}@2`, channel: 'production' }]);
  });

  it('takes a pinned version and `latest`, each recorded as the version it was', async () => {
    const batch = await ran(`{{prompt:${ID}@1}} then {{ prompt:${ID}@latest }}`);
    expect((await promptOf(batch)).setup).toMatchObject({
      prompt: 'Hello, version one. then Hello, version three.',
      prompts: [
        { prompt: `${ID}@1`, channel: null },
        { prompt: `${ID}@3`, channel: 'latest' },
      ],
    });
  });

  it('refuses any other {{prompt:…}} with 400 naming the fix, on both sides of each bound', async () => {
    expectBadRequest(await start(`{{prompt:${ID}}} Be brief.`), `The suite prompt holds {{prompt:${ID}}}, which names no version or channel: ${FIX}`);
    expectBadRequest(await start('{{prompt:}}'), 'which names no version or channel');
    expectBadRequest(await start(`{{prompt:${ID}@0}}`), 'versions start at 1');
    expectBadRequest(await start(`{{prompt:${ID}@4}}`), 'has no version 4; its highest is 3');
    expectBadRequest(await start(`{{prompt:${ID}@Prod}}`), 'is neither a version nor a channel name');
    expectBadRequest(await start(`{{prompt:${ID}@${'c'.repeat(37)}}}`), 'is neither a version nor a channel name');
    // A channel name of 36 characters is one: refused only because no such channel exists.
    expectBadRequest(await start(`{{prompt:${ID}@${'c'.repeat(36)}}}`), `has no channel "${'c'.repeat(36)}" (its channels: production, latest)`);
    expectBadRequest(await start(`{{prompt:${ID}@staging}}`), 'promote one with prompts.promote, or name a version');
    expectBadRequest(await start('{{prompt:Support/Greeting@1}}'), 'whose prompt id "Support/Greeting" is not one');
    expectBadRequest(await start('{{prompt:nowhere@production}}'), 'prompt "nowhere" does not exist');
    const twenty = Array.from({ length: 20 }, () => `{{prompt:${ID}@1}}`).join(' ');
    expect((await start(twenty)).status).toBe(200);
    expectBadRequest(await start(`${twenty} {{prompt:${ID}@1}}`), 'references 21 prompt versions; at most 20 are allowed');
  });

  it('from `assay eval` (the built CLI as a child process): a channel reference runs; a bare {{prompt:ID}} exits 2 with the fix', async () => {
    const dir = tempDir('assay-prompt-refs-');
    const suite = (prompt: string) =>
      [
        'name: greet',
        `suite: { id: greet, prompt: "${prompt}" }`,
        'cases:',
        '  - { id: greets, verify: "grep -q version out.txt" }',
        'variants:',
        `  - { harness: command, model: none, profile: { run: 'echo "$ASSAY_PROMPT" > out.txt' } }`,
        'trials: 1',
        '',
      ].join('\n');
    const cli = (file: string) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const env = { PATH: process.env.PATH ?? '', ASSAY_URL: server.url, ASSAY_API_KEY: INIT_KEY, TMPDIR: tempDir('assay-cli-tmp-') };
        execFile(process.execPath, [CLI, 'eval', file, '--no-progress'], { env, cwd: dir }, (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const good = path.join(dir, 'good.yaml');
    fs.writeFileSync(good, suite(`{{prompt:${ID}@production}}`));
    const passed = await cli(good);
    expect(passed).toMatchObject({ code: 0 });
    const batchId = /batch (bat_[a-z0-9]+)/.exec(passed.stdout)![1];
    const batch = (await api.call('evals.batches.get', { id: batchId })).body;
    expect(batch.runs[0].setup.prompts).toEqual([{ prompt: `${ID}@3`, channel: 'production' }]);

    const bare = path.join(dir, 'bare.yaml');
    fs.writeFileSync(bare, suite(`{{prompt:${ID}}}`));
    const refused = await cli(bare);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`{{prompt:${ID}}}, which names no version or channel: write {{prompt:ID@VERSION}}`);
  });
});
