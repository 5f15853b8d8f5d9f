import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acmeServerPerSuite, CLI, INIT_KEY, tempDir, waitUntil } from '../support/servers';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The suite every test starts from: two cases on the command harness, the agent writes the word. */
const SUITE = `name: greetings
suite:
  id: cli-greetings
  prompt: "Write {{word}} into out.txt"
cases:
  - id: say-hello
    variables: { word: hello }
    verify: grep -q hello out.txt
  - id: say-bye
    variables: { word: bye }
    verify: grep -q bye out.txt
variants:
  - harness: command
    model: none
    profile:
      run: 'echo "$ASSAY_PROMPT" | sed "s/Write //; s/ into out.txt//" > out.txt'
trials: 1
`;

/**
 * `assay eval` as a user runs it: the compiled CLI as a child process, against a real server
 * over HTTP, with suite files on disk.
 */
describe('assay eval', () => {
  const suite = acmeServerPerSuite();
  let dir: string;

  beforeEach(() => {
    dir = tempDir('assay-cli-eval-');
  });

  const write = (name: string, content: string): string => {
    const file = path.join(dir, name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
    return file;
  };

  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? '',
    ASSAY_URL: suite.server.url,
    ASSAY_API_KEY: INIT_KEY,
    ...extra,
  });

  /**
   * Runs a child to its end, asynchronously: the server answers from this very process.
   * `onOutput` sees stdout as it comes (to interrupt it).
   */
  const runChild = (program: string, args: string[], extra: Record<string, string>, onOutput?: (stdout: string, child: ReturnType<typeof spawn>) => void) =>
    new Promise<CliResult>((resolve) => {
      const child = spawn(program, args, { cwd: dir, env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        onOutput?.(stdout, child);
      });
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  const cli = (args: string[], extra: Record<string, string> = {}, onOutput?: (stdout: string, child: ReturnType<typeof spawn>) => void) =>
    runChild(process.execPath, [CLI, 'eval', ...args], extra, onOutput);

  const batchCount = async () => (await suite.api.call('evals.batches.list', { limit: 1 })).body.total as number;
  const batchIdIn = (output: string) => /batch (bat_[a-z0-9]+)/.exec(output)?.[1];

  it('runs a passing suite, exits 0 and prints the table of variants', async () => {
    const result = await cli([write('suite.yaml', SUITE)]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const batchId = batchIdIn(result.stdout)!;
    expect(result.stdout).toContain(`${suite.server.url}/#/batches/${batchId}`);
    expect(result.stdout).toMatch(/variant\s+trials\s+passed\s+failed\s+void\s+pass rate \[95% CI\]\s+pass@1/);
    expect(result.stdout).toMatch(/command\/none\s+2\s+2\s+0\s+0\s+100% \[34%, 100%\]\s+100%/);
    const batch = (await suite.api.call('evals.batches.get', { id: batchId })).body;
    expect(batch.trigger).toEqual({ source: 'cli', url: null });
  });

  it('exits 1 when a case fails, names it in the JUnit file, and writes the batch as JSON', async () => {
    const file = write('suite.yaml', SUITE.replace('grep -q bye out.txt', 'grep -q ciao out.txt'));
    const junit = path.join(dir, 'report.xml');
    const json = path.join(dir, 'batch.json');
    const result = await cli([file, '--junit', junit, '--json', json], {
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_REPOSITORY: 'acme/app',
      GITHUB_RUN_ID: '42',
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('Failing cases:');
    expect(result.stdout).toMatch(/✗ say-bye on command\/none \(run_/);
    expect(result.stdout).toContain('verify `grep -q ciao out.txt` exited 1');
    expect(result.stdout).toContain('/v1/evals.runs.get');
    const xml = fs.readFileSync(junit, 'utf8');
    expect(xml).toMatch(
      /<testcase classname="greetings.command\/none" name="say-bye"[^>]*>\s*<failure message="1 of 1 trials failed: verify `grep -q ciao out.txt` exited 1"/,
    );
    expect(xml).toMatch(/<testcase classname="greetings.command\/none" name="say-hello"[^>]*\/>/);
    const written = JSON.parse(fs.readFileSync(json, 'utf8'));
    const batch = (await suite.api.call('evals.batches.get', { id: batchIdIn(result.stdout) })).body;
    expect(written).toEqual(batch);
    expect(batch.trigger).toEqual({ source: 'cli', url: 'https://github.com/acme/app/actions/runs/42' });
  });

  it('passes a failing suite with --fail-on never, and fails a void trial only with strict', async () => {
    const voiding = SUITE.replace('grep -q bye out.txt', 'no-such-command-here');
    expect((await cli([write('void.yaml', voiding)])).code).toBe(0);
    expect((await cli([write('void.yaml', voiding), '--fail-on', 'strict'])).code).toBe(1);
    const failing = SUITE.replace('grep -q bye out.txt', 'exit 1');
    expect((await cli([write('fail.yaml', failing), '--fail-on', 'never'])).code).toBe(0);
  });

  it('refuses an invalid file with exit 2, naming the line and field, and sends nothing', async () => {
    const before = await batchCount();
    const file = write('suite.yaml', SUITE.replace('verify: grep -q bye out.txt', 'verify: ""').replace('trials: 1', 'trials: 11'));
    const result = await cli([file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('suite.yaml:11: cases[1].verify: verify must be longer than or equal to 1 characters');
    expect(result.stderr).toContain('suite.yaml:17: trials: trials must not be greater than 10');
    expect(result.stdout).toBe('');
    expect(await batchCount()).toBe(before);
  });

  it('names the line of an unknown key and of a rule the server checks beyond the schema, in JSON too', async () => {
    const json = {
      suite: { id: 'cli-json', prompt: 'Write {{word}}' },
      cases: [{ id: 'one', variables: { word: 'x' }, verify: 'true', colour: 'red' }],
      variants: [{ harness: 'command', model: 'none' }],
      trials: 1,
    };
    const result = await cli([write('suite.json', JSON.stringify(json, null, 2))]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/suite\.json:\d+: cases\[0\]\.colour: /);
    const line = Number(/suite\.json:(\d+): cases\[0\]\.colour/.exec(result.stderr)![1]);
    expect(fs.readFileSync(path.join(dir, 'suite.json'), 'utf8').split('\n')[line - 1]).toContain('"colour"');

    const noRun = { ...json, cases: [{ id: 'one', variables: { word: 'x' }, verify: 'true' }] };
    const rule = await cli([write('rule.json', JSON.stringify(noRun, null, 2))]);
    expect(rule.code).toBe(2);
    expect(rule.stderr).toMatch(/rule\.json:\d+: variants\[0\] uses the command harness, which needs profile\.run/);
  });

  it('exits 2 when the server cannot be reached, saying what to do', async () => {
    const result = await cli([write('suite.yaml', SUITE), '--url', 'http://127.0.0.1:9']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Cannot reach the Assay server at http://127.0.0.1:9');
    expect(result.stderr).toContain('--url or ASSAY_URL');
  });

  it('exits 2 for bad usage: no file, an unknown flag, a bad --trials, no key', async () => {
    const file = write('suite.yaml', SUITE);
    expect((await cli([])).code).toBe(2);
    const unknown = await cli([file, '--trails', '2']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--trails'");
    expect((await cli([file, '--trials', 'many'])).code).toBe(2);
    const keyless = await cli([file], { ASSAY_API_KEY: '' });
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain('No API key');
    const refused = await cli([file], { ASSAY_API_KEY: 'assay_not_a_key_of_anyone_0000000000000' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('The server refused the API key');
  });

  it('keeps the cases --filter matches and runs --trials trials of each', async () => {
    const file = write(
      'suite.yaml',
      SUITE.replace('  - id: say-bye', '  - id: shout-hello\n    variables: { word: HELLO }\n    verify: grep -q HELLO out.txt\n  - id: say-bye'),
    );
    const result = await cli([file, '--filter', 'say-*', '--trials', '2']);
    expect(result.code).toBe(0);
    const batch = (await suite.api.call('evals.batches.get', { id: batchIdIn(result.stdout) })).body;
    expect(batch.runs.map((run: any) => run.case.id)).toEqual(['say-hello', 'say-bye']);
    expect(batch.runs.map((run: any) => run.trials.length)).toEqual([2, 2]);
    expect(result.stdout).toContain('pass@2');

    const none = await cli([file, '--filter', 'wave-?']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no case matches --filter "wave-?" (its cases: say-hello, shout-hello, say-bye)');
  });

  it('loads promptFile, verifyFile, a directory as a files source and a bundled validator sourceFile', async () => {
    write('prompts/opening.md', 'Copy {{word}} from data.txt into out.txt');
    write('checks/out-has-data.sh', 'cmp -s data.txt out.txt');
    write('workspace/data.txt', 'hello\n');
    write('workspace/nested/deep.txt', 'deep\n');
    write('workspace/.git/config', '[core]\n');
    write('validators/helper.ts', "export const MARKER: string = 'bundled-helper-marker';\n");
    write('validators/check.ts', "import { MARKER } from './helper';\nexport default function check(): string { return MARKER; }\n");
    const file = write(
      'suite.yaml',
      `suite:
  id: cli-files
  promptFile: ./prompts/opening.md
  source: { kind: files, directory: ./workspace }
cases:
  - id: copies-data
    variables: { word: hello }
    verifyFile: ./checks/out-has-data.sh
  - id: has-validator
    variables: { word: hello }
    validator: { name: check, sourceFile: ./validators/check.ts }
variants:
  - harness: command
    model: none
    profile: { run: 'cp data.txt out.txt' }
trials: 1
`,
    );
    const result = await cli([file, '--fail-on', 'never']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const batch = (await suite.api.call('evals.batches.get', { id: batchIdIn(result.stdout) })).body;
    const [copies, validated] = batch.runs;
    expect(copies.trials[0].status).toBe('passed');
    expect(copies.setup.prompt).toBe('Copy hello from data.txt into out.txt');
    expect(copies.setup.verify).toBe('cmp -s data.txt out.txt');
    expect(copies.setup.source).toEqual({ kind: 'files', files: { 'data.txt': 'hello\n', 'nested/deep.txt': 'deep\n' } });
    expect(validated.setup.validator).toContain('bundled-helper-marker');
    expect(validated.setup.validator).not.toContain("from './helper'");
  });

  it('refuses a directory with a symbolic link leaving it, and a missing verifyFile, at their lines', async () => {
    write('workspace/data.txt', 'hello\n');
    fs.symlinkSync('/etc/hostname', path.join(dir, 'workspace', 'host'));
    const file = write(
      'suite.yaml',
      SUITE.replace('  prompt:', '  source: { kind: files, directory: ./workspace }\n  prompt:').replace(
        'verify: grep -q bye out.txt',
        'verifyFile: ./missing.sh',
      ),
    );
    const result = await cli([file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('suite.yaml:4: suite.source.directory: host is a symbolic link leaving the directory');
    expect(result.stderr).toMatch(/suite\.yaml:12: cases\[1\]\.verifyFile: cannot read .*missing\.sh: ENOENT/);
  });

  it('draws bars under a terminal, and plain lines without escape codes with --no-progress or a pipe', async () => {
    const file = write('suite.yaml', SUITE);
    const piped = await cli([file]);
    expect(piped.stdout).not.toContain('\u001b');
    expect(piped.stdout).toMatch(/\[\d\d:\d\d\] command\/none: 2\/2 trials done, 2 passed, 0 failed, 0 void/);
    if (spawnSync('script', ['--version']).status !== 0) {
      console.warn('skipped the terminal half: util-linux `script` is not installed');
      return;
    }
    const command = (extra: string) => `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} eval ${JSON.stringify(file)}${extra}`;
    // `script` gives the CLI a pseudo-terminal as stdout, as a user's shell does.
    const underTerminal = (extra: string) => runChild('script', ['-qefc', command(extra), '/dev/null'], {});
    const tty = await underTerminal('');
    expect(tty.code).toBe(0);
    expect(tty.stdout).toMatch(/command\/none \|[█░]+\| 2\/2 trials · passed 2 · failed 0 · void 0/);
    expect(tty.stdout).toContain('\u001b[');
    const plain = await underTerminal(' --no-progress');
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain('\u001b');
    expect(plain.stdout).toContain('2/2 trials done');
  });

  it('runs several files one after another and exits with the worst outcome', async () => {
    const passing = write('a.yaml', SUITE);
    const failing = write('b.yaml', SUITE.replace('id: cli-greetings', 'id: cli-other').replace('grep -q bye out.txt', 'exit 1'));
    const json = path.join(dir, 'batches.json');
    const result = await cli([passing, failing, '--json', json]);
    expect(result.code).toBe(1);
    const written = JSON.parse(fs.readFileSync(json, 'utf8'));
    expect(written.map((batch: any) => batch.runs[0].suite.id)).toEqual(['cli-greetings', 'cli-other']);
  });

  it('stops following on Ctrl-C, prints the batch id and exits 130', async () => {
    const slow = SUITE.replace("> out.txt'", "> out.txt; sleep 5'");
    let interrupted = false;
    const result = await cli([write('slow.yaml', slow)], {}, (stdout, child) => {
      if (!interrupted && /trials done/.test(stdout)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    expect(result.code).toBe(130);
    const batchId = batchIdIn(result.stdout)!;
    expect(result.stderr).toContain(`Interrupted: stopped following batch ${batchId}`);
    // The batch is the server's: it goes on there (a later issue's cancel will stop it).
    await waitUntil(async () => (await suite.api.call('evals.batches.get', { id: batchId })).status === 200, 5000);
  });
});
