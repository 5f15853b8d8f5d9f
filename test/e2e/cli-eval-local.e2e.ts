import { ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startBody, waitForBatch } from '../support/evals';
import { startFakeProvider } from '../support/fake-provider';
import { CLI, filesUnder, INIT_KEY, InProcessServer, startInProcess, tempDir, TEST_CONSENT_CONFIG, waitUntil } from '../support/servers';

/** Short enough to wait out in a test; the CLI beats well inside it (ASSAY_RUNNER_BEAT_MS). */
const SILENCE_MS = 2000;
const BEAT_MS = 300;
const SECRET = 'local-secret-value-7f3a91';
const SECRET_SHA = createHash('sha256').update(SECRET).digest('hex');
const PROVIDER_KEY = 'sk-local-provider-key-5d1c0e77';

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface RunningCli {
  child: ChildProcess;
  stdout: () => string;
  finished: Promise<Finished>;
}

/** A local suite: the agent (a shell command) writes the word of each case into out.txt. */
const suiteYaml = (options: { id: string; sandboxLine?: string; run?: string; verifyBye?: string; extra?: string }) => `name: ${options.id}
${options.extra ?? ''}suite:
  id: ${options.id}
  prompt: "Write {{word}} into out.txt"
cases:
  - id: say-hello
    variables: { word: hello }
    verify: grep -q hello out.txt
  - id: say-bye
    variables: { word: bye }
    verify: ${options.verifyBye ?? 'grep -q bye out.txt'}
variants:
  - harness: command
    model: none
${options.sandboxLine ?? '    sandbox: local\n'}    profile:
      run: '${options.run ?? 'echo "$ASSAY_PROMPT" | sed "s/Write //; s/ into out.txt//" > out.txt'}'
trials: 1
`;

/**
 * `assay eval` in local mode as a user runs it: the compiled CLI as a child process, running the
 * trials on this machine and reporting them to a real server over HTTP, whose silence window is
 * short so a killed CLI's batch can be seen failing.
 */
describe('assay eval, local mode', () => {
  let server: InProcessServer;
  let dir: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    server = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ASSAY_RUNNER_SILENCE_MS: String(SILENCE_MS) });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    dir = tempDir('assay-cli-local-');
  });
  afterEach(() => {
    // A CLI a failed test left running takes its trials (its process group) with it.
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) killGroup(child, 'SIGKILL');
  });

  const write = (name: string, content: string): string => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content);
    return file;
  };

  /** The CLI's environment: the server, the key, the test consent as the user's ASSAY_CONFIG, a quick beat, its own TMPDIR. */
  const env = (extra: Record<string, string>) => ({
    PATH: process.env.PATH ?? '',
    ASSAY_URL: server.url,
    ASSAY_API_KEY: INIT_KEY,
    ASSAY_CONFIG: TEST_CONSENT_CONFIG,
    ASSAY_RUNNER_BEAT_MS: String(BEAT_MS),
    TMPDIR: tempDir('assay-cli-tmp-'),
    ...extra,
  });

  /** Starts the CLI in a process group of its own, so a test can kill it with its trials. */
  const start = (args: string[], extra: Record<string, string> = {}): RunningCli => {
    const child = spawn(process.execPath, [CLI, 'eval', ...args], { cwd: dir, env: env(extra), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const finished = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    return { child, stdout: () => stdout, finished };
  };
  const cli = (args: string[], extra: Record<string, string> = {}) => start(args, extra).finished;

  const batchIdIn = (output: string) => /batch (bat_[a-z0-9]+)/.exec(output)?.[1];
  const batchOf = async (running: RunningCli): Promise<string> => {
    await waitUntil(async () => batchIdIn(running.stdout()) !== undefined, 20000);
    return batchIdIn(running.stdout())!;
  };
  const getBatch = async (id: string) => (await server.client.call('evals.batches.get', { id })).body;
  const runningBatches = async () => (await server.client.call('evals.batches.list', { limit: 100 })).body.batches.filter((b: any) => b.status === 'running');

  it('runs a suite whose variant says sandbox: local here, and reads back like a server batch, flagged local', async () => {
    const result = await cli([write('suite.yaml', suiteYaml({ id: 'local-greetings' }))]);
    expect(result.code).toBe(0);
    const batchId = batchIdIn(result.stdout)!;
    expect(result.stdout).toContain(`local-greetings: batch ${batchId} (local)`);
    expect(result.stdout).toMatch(/variant\s+trials\s+passed\s+failed\s+void\s+pass rate \[95% CI\]\s+pass@1/);
    expect(result.stdout).toMatch(/command\/none\s+2\s+2\s+0\s+0\s+100% \[34%, 100%\]\s+100%/);

    const local = await getBatch(batchId);
    expect(local).toMatchObject({ status: 'finished', local: true, failure: null, trigger: { source: 'cli' } });
    const cases = [
      { id: 'say-hello', variables: { word: 'hello' }, verify: 'grep -q hello out.txt' },
      { id: 'say-bye', variables: { word: 'bye' }, verify: 'grep -q bye out.txt' },
    ];
    const run = 'echo "$ASSAY_PROMPT" | sed "s/Write //; s/ into out.txt//" > out.txt';
    const twinStart = startBody({
      suite: { id: 'local-greetings', prompt: 'Write {{word}} into out.txt' },
      cases,
      variants: [{ harness: 'command', model: 'none', profile: { run } }],
    });
    const remote = await waitForBatch(server.client, (await server.client.call('evals.batches.start', twinStart)).body.id);
    expect(remote.local).toBe(false);
    for (const [index, localRun] of local.runs.entries()) {
      const twin = remote.runs[index];
      expect(localRun.local).toBe(true);
      expect(Object.keys(localRun).sort()).toEqual(Object.keys(twin).sort());
      expect(localRun.distribution).toEqual(twin.distribution);
      expect(localRun.trials.map((t: any) => t.status)).toEqual(twin.trials.map((t: any) => t.status));
      expect(Object.keys(localRun.trials[0]).sort()).toEqual(Object.keys(twin.trials[0]).sort());
      expect(localRun.trials[0].verifySteps).toEqual(twin.trials[0].verifySteps);
      expect(localRun.trials[0].trajectory.map((e: any) => [e._tag, e.command, e.exitCode, e.output])).toEqual(
        twin.trials[0].trajectory.map((e: any) => [e._tag, e.command, e.exitCode, e.output]),
      );
      const viaRun = (await server.client.call('evals.runs.get', { id: localRun.id })).body;
      expect(viaRun).toMatchObject({ id: localRun.id, local: true, status: 'finished', trials: localRun.trials });
    }
  });

  it('runs a suite without sandbox: local here with --local, and exits 1 when a case fails', async () => {
    const file = write('suite.yaml', suiteYaml({ id: 'local-flag', sandboxLine: '', verifyBye: 'grep -q ciao out.txt' }));
    const junit = path.join(dir, 'report.xml');
    const result = await cli([file, '--local', '--junit', junit]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('(local)');
    expect(result.stdout).toMatch(/command\/none\s+2\s+1\s+1\s+0\s+50%/);
    expect(result.stdout).toMatch(/✗ say-bye on command\/none \(run_/);
    expect(fs.readFileSync(junit, 'utf8')).toMatch(/name="say-bye"[^>]*>\s*<failure message="1 of 1 trials failed: verify `grep -q ciao out.txt` exited 1"/);
    const batch = await getBatch(batchIdIn(result.stdout)!);
    expect(batch).toMatchObject({ status: 'finished', local: true });
    expect(batch.runs.map((run: any) => [run.local, run.variant.sandbox])).toEqual([
      [true, 'local'],
      [true, 'local'],
    ]);
  });

  it("runs the user's own harness drivers from ASSAY_CONFIG", async () => {
    const config = write(
      'my-config.yaml',
      'allowUnsandboxed: true\nharnesses:\n  harness_kind_1:\n    version: "9.9.9-mine"\n    run: "echo {{prompt}} > out.txt"\n',
    );
    const file = write(
      'mine.yaml',
      'suite: { id: my-harness, prompt: hello }\ncases:\n  - { id: writes, verify: grep -q hello out.txt }\nvariants:\n  - { harness: harness_kind_1, model: any, sandbox: local }\ntrials: 1\n',
    );
    const mine = await cli([file, '--fail-on', 'strict'], { ASSAY_CONFIG: config });
    expect(mine.code).toBe(0);
    expect((await getBatch(batchIdIn(mine.stdout)!)).runs[0].trials[0].status).toBe('passed');
    // Without it, this machine has no driver for that harness: the trial is void.
    const without = await cli([file, '--fail-on', 'strict'], { ASSAY_CONFIG: TEST_CONSENT_CONFIG });
    // Its one trial void, nothing was measured.
    expect(without.code).toBe(3);
    expect((await getBatch(batchIdIn(without.stdout)!)).runs[0].trials[0]).toMatchObject({
      status: 'void',
      failure: expect.stringContaining('harness_kind_1'),
    });
  });

  it("runs a simulated user on the user's own provider from ASSAY_CONFIG, its model use priced as a server trial's", async () => {
    const provider = await startFakeProvider();
    try {
      provider.answer({ text: 'Now say it again.', usage: { input: 100, output: 20 } }, { text: '<<DONE>>', usage: { input: 150, output: 5 } });
      const config = write(
        'my-config.yaml',
        [
          'allowUnsandboxed: true',
          `providers: { mine: { protocol: openai, baseURL: "${provider.url}", apiKeyEnv: MY_PROVIDER_KEY } }`,
          'users: { default: mine, defaultModel: my-user-model }',
          'prices: { my-user-model: { inputPerMTok: 2, outputPerMTok: 8 } }',
        ].join('\n'),
      );
      const file = write(
        'talk.yaml',
        [
          'suite: { id: local-talk, prompt: "Say hello" }',
          'cases:',
          '  - id: talks',
          '    user: { kind: simulated, goal: Hear hello twice, prompt: You are terse. }',
          '    verify: test "$(grep -c hello turns.log)" = 2',
          'variants:',
          "  - { harness: command, model: none, sandbox: local, profile: { run: 'cat > /dev/null; echo hello >> turns.log; echo hello' } }",
          'trials: 1',
        ].join('\n'),
      );
      const result = await cli([file], { ASSAY_CONFIG: config, MY_PROVIDER_KEY: PROVIDER_KEY });
      expect(result.code).toBe(0);
      expect(provider.requests.map((request) => [request.body.model, request.headers.authorization])).toEqual([
        ['my-user-model', `Bearer ${PROVIDER_KEY}`],
        ['my-user-model', `Bearer ${PROVIDER_KEY}`],
      ]);
      const answer = await server.client.call('evals.batches.get', { id: batchIdIn(result.stdout) });
      const trial = answer.body.runs[0].trials[0];
      expect(trial).toMatchObject({ status: 'passed', turns: 2, endReason: 'user-done' });
      expect(trial.costs.components.find((c: any) => c.component === 'user')).toMatchObject({
        classification: 'simulated-user',
        source: 'mine',
        usd: (250 * 2 + 25 * 8) / 1_000_000,
        detail: { provider: 'mine', model: 'my-user-model', calls: 2, inputTokens: 250, outputTokens: 25, totalTokens: 275 },
      });
      expect(answer.text).not.toContain(PROVIDER_KEY);
    } finally {
      await provider.close();
    }
  });

  it("gives a local agent its model through the CLI's own model gateway: the key stays with the CLI, the calls are metered into the report", async () => {
    const provider = await startFakeProvider();
    try {
      provider.answer({ text: 'hello from the model', usage: { input: 700, output: 50 } });
      const config = write(
        'gateway-config.yaml',
        [
          'allowUnsandboxed: true',
          `providers: { mine: { protocol: openai, baseURL: "${provider.url}", apiKeyEnv: MY_PROVIDER_KEY } }`,
          'prices: { my-model: { inputPerMTok: 2, outputPerMTok: 8 } }',
        ].join('\n'),
      );
      const agent = [
        'import json, os, urllib.request',
        "request = urllib.request.Request(os.environ['ASSAY_MODEL_BASE_URL'] + '/v1/chat/completions',",
        "    data=json.dumps({'model': 'my-model', 'messages': [{'role': 'user', 'content': 'hi'}]}).encode(),",
        "    headers={'authorization': 'Bearer ' + os.environ['ASSAY_MODEL_API_KEY'], 'content-type': 'application/json'})",
        "open('out.txt', 'w').write(json.loads(urllib.request.urlopen(request).read())['choices'][0]['message']['content'])",
      ].join('\n');
      const file = write(
        'gateway.yaml',
        [
          'suite: { id: local-gateway, prompt: "Say hello" }',
          'cases:',
          '  - id: asks-its-model',
          '    verify: grep -q "hello from the model" out.txt',
          'variants:',
          `  - { harness: command, model: my-model, sandbox: local, profile: { provider: mine, files: { agent.py: ${JSON.stringify(agent)} }, run: python3 agent.py } }`,
          'trials: 1',
        ].join('\n'),
      );
      const result = await cli([file], { ASSAY_CONFIG: config, MY_PROVIDER_KEY: PROVIDER_KEY });
      expect(result.code).toBe(0);
      expect(provider.requests.map((request) => request.headers.authorization)).toEqual([`Bearer ${PROVIDER_KEY}`]);
      const answer = await server.client.call('evals.batches.get', { id: batchIdIn(result.stdout) });
      const trial = answer.body.runs[0].trials[0];
      expect(trial.status).toBe('passed');
      expect(trial.trajectory.filter((entry: any) => entry._tag === 'model-call')).toEqual([
        expect.objectContaining({ provider: 'mine', model: 'my-model', protocol: 'openai-chat', status: 200, inputTokens: 700, outputTokens: 50 }),
      ]);
      expect(trial.usage).toMatchObject({ inputTokens: 700, outputTokens: 50 });
      expect(trial.costs.components.find((c: any) => c.component === 'model')).toMatchObject({
        classification: 'model',
        source: 'gateway',
        usd: (700 * 2 + 50 * 8) / 1_000_000,
      });
      expect(answer.text).not.toContain(PROVIDER_KEY);
    } finally {
      await provider.close();
    }
  });

  it("gives trials the user's env by name, redacts it from their output, and the server never holds it", async () => {
    // The run proves it got the value by its hash: the suite, which the server stores, never holds it.
    const run = `echo "the value is $MY_LOCAL_SECRET"; test "$(printf %s "$MY_LOCAL_SECRET" | sha256sum | cut -c1-64)" = ${SECRET_SHA} && echo hello > out.txt`;
    const file = write('secret.yaml', suiteYaml({ id: 'local-secret', run, verifyBye: 'grep -q hello out.txt', extra: 'env: [MY_LOCAL_SECRET]\n' }));
    const json = path.join(dir, 'batch.json');
    const result = await cli([file, '--json', json], { MY_LOCAL_SECRET: SECRET });
    expect(result.code).toBe(0);
    const batchId = batchIdIn(result.stdout)!;
    const batch = await getBatch(batchId);
    const output = batch.runs[0].trials[0].trajectory.find((e: any) => e._tag === 'command' && e.output.includes('the value is')).output;
    expect(output).toContain('the value is [redacted]');

    const answers = [
      await server.client.call('evals.batches.get', { id: batchId }),
      await server.client.call('evals.runs.get', { id: batch.runs[0].id }),
      await server.client.call('evals.runs.get', { id: batch.runs[1].id }),
      await server.client.call('evals.batches.list', { limit: 100 }),
      await server.client.call('evals.cases.list', {}),
      await server.client.call('evals.cases.get', { id: 'say-hello' }),
    ];
    for (const answer of answers) expect(answer.text).not.toContain(SECRET);
    for (const text of [result.stdout, result.stderr, fs.readFileSync(json, 'utf8')]) expect(text).not.toContain(SECRET);
    const files = filesUnder(server.dataDir);
    expect(files.some((file) => /\.(sqlite|db)(-wal)?$/.test(file))).toBe(true);
    for (const file of files) {
      expect([path.relative(server.dataDir, file), fs.readFileSync(file).includes(SECRET)]).toEqual([path.relative(server.dataDir, file), false]);
    }
  });

  it('exits 2 naming an env variable this environment does not set, and sends nothing', async () => {
    const before = (await server.client.call('evals.batches.list', { limit: 1 })).body.total;
    const file = write('missing.yaml', suiteYaml({ id: 'local-missing', extra: 'env: [MY_LOCAL_SECRET, NOT_SET_ANYWHERE_42]\n' }));
    const result = await cli([file], { MY_LOCAL_SECRET: SECRET });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('missing.yaml: env names NOT_SET_ANYWHERE_42, which this environment does not set');
    expect(result.stderr).not.toContain('MY_LOCAL_SECRET,');
    expect((await server.client.call('evals.batches.list', { limit: 1 })).body.total).toBe(before);
  });

  it('on Ctrl-C, reports the finished trials, finishes the batch as cancelled, and exits 130', async () => {
    // say-hello passes at once; say-bye runs until interrupted, past the silence window (the CLI beats).
    const run = 'case "$ASSAY_PROMPT" in *bye*) sleep 60;; esac; echo hello > out.txt';
    const running = start([write('slow.yaml', suiteYaml({ id: 'local-interrupted', run }))]);
    const batchId = await batchOf(running);
    const helloPassed = async () => (await getBatch(batchId)).runs[0].trials[0].status === 'passed';
    await waitUntil(helloPassed, 20000);
    await new Promise((resolve) => setTimeout(resolve, SILENCE_MS + 1000));
    expect((await getBatch(batchId)).status).toBe('running');

    running.child.kill('SIGINT');
    const result = await running.finished;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain(`Interrupted: batch ${batchId} was finished as cancelled`);
    const batch = await getBatch(batchId);
    expect(batch).toMatchObject({ status: 'failed', local: true, failure: 'cancelled' });
    expect(batch.runs.map((r: any) => r.trials.map((t: any) => [t.status, t.failure]))).toEqual([[['passed', null]], [['void', 'cancelled by the runner']]]);
    expect(result.stdout).toMatch(/command\/none\s+2\s+1\s+0\s+1/);
  });

  it('refuses a fourth batch, local or not; a killed CLI stops checking in, its batch fails and frees its slot', async () => {
    const slow = (id: string) => write(`${id}.yaml`, suiteYaml({ id, run: 'sleep 60' }));
    const holders = ['local-hold-a', 'local-hold-b', 'local-hold-c'].map((id) => start([slow(id), '--no-progress']));
    const ids = await Promise.all(holders.map(batchOf));
    await waitUntil(async () => (await runningBatches()).length === 3, 20000);

    // Without a wait for a slot (--wait-timeout 0), the first 409 ends the command.
    const fourthLocal = await cli([slow('local-fourth'), '--wait-timeout', '0']);
    const serverSuite = write('server.yaml', suiteYaml({ id: 'server-fourth', sandboxLine: '' }));
    const fourthServer = await cli([serverSuite, '--wait-timeout', '0']);
    for (const fourth of [fourthLocal, fourthServer]) {
      expect(fourth.code).toBe(1);
      expect(fourth.stderr).toMatch(/could not start: no slot came free within --wait-timeout 0s \(This organization already has 3 batches running/);
      expect(fourth.stdout).toBe('');
    }

    // SIGKILL: no finish, no more beats. The trials it was running die with its process group.
    const [killed, ...others] = holders;
    killGroup(killed.child, 'SIGKILL');
    const failed = await waitForBatch(server.client, ids[0], 30000);
    expect(failed).toMatchObject({ status: 'failed', failure: 'runner stopped checking in', local: true });
    expect(failed.runs.flatMap((run: any) => run.trials.map((t: any) => t.status))).toEqual(['void', 'void']);

    const next = await cli([serverSuite]);
    expect(next.code).toBe(0);
    expect((await getBatch(batchIdIn(next.stdout)!)).status).toBe('finished');

    for (const other of others) other.child.kill('SIGINT');
    for (const [index, other] of others.entries()) {
      expect((await other.finished).code).toBe(130);
      expect((await getBatch(ids[index + 1])).status).toBe('failed');
    }
  });
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}
