import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { acmeServerPerSuite, CLI, INIT_KEY, ROOT, tempDir, TEST_CONSENT_CONFIG } from '../support/servers';

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const STARTER = ['evals/suite.yaml', 'evals/checks/said-bye.mjs', '.github/workflows/assay.yml'];

/** Every file under a directory, as paths relative to it. */
function filesIn(dir: string, under = ''): string[] {
  return fs.readdirSync(path.join(dir, under), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(under, entry.name);
    return entry.isDirectory() ? filesIn(dir, relative) : [relative];
  });
}

/**
 * The first steps of a new user, through the compiled CLI as a child process: `assay --version`,
 * `assay --help`, and `assay init`, whose suite then runs with `assay eval --local` against a real
 * server over HTTP and passes.
 */
describe('assay init, --version and --help', () => {
  const suite = acmeServerPerSuite();
  let dir: string;

  beforeEach(() => {
    dir = tempDir('assay-cli-init-');
  });

  const assay = (args: string[], extra: Record<string, string> = {}) =>
    new Promise<CliResult>((resolve) => {
      const env = { PATH: process.env.PATH ?? '', ASSAY_URL: suite.server.url, ASSAY_API_KEY: INIT_KEY, TMPDIR: tempDir('assay-cli-tmp-'), ...extra };
      const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it('answers --version with the package version and --help with the commands, init among them', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) expect(await assay([flag])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    const help = await assay(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: assay <command>/);
    expect(help.stdout).toMatch(/^ {2}init {2,}write a first suite/m);
    expect(help.stdout).toMatch(/^ {2}--version {2,}print the version/m);
  });

  it('writes a suite, its validator and a workflow, and the suite passes with eval --local', async () => {
    const init = await assay(['init']);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(init.stdout).toContain(STARTER.map((file) => `wrote ${file}\n`).join(''));
    expect(init.stdout).toContain('set the repository variable ASSAY_PACKAGE');
    expect(filesIn(dir).sort()).toEqual([...STARTER].sort());

    const written = parse(fs.readFileSync(path.join(dir, 'evals/suite.yaml'), 'utf8'));
    expect(written.cases).toEqual([
      expect.objectContaining({ id: 'say-hello', verify: expect.any(String) }),
      expect.objectContaining({ id: 'say-bye', validator: { name: 'saidBye', sourceFile: './checks/said-bye.mjs' } }),
    ]);

    // The workflow's own command line, as the runner runs it (the server and key are this test's).
    const result = await assay(['eval', '--local', 'evals/suite.yaml', '--no-progress', '--junit', 'assay-junit.xml', '--json', 'assay-results.json'], {
      ASSAY_CONFIG: TEST_CONSENT_CONFIG,
    });
    expect(result.code).toBe(0);
    const batch = JSON.parse(fs.readFileSync(path.join(dir, 'assay-results.json'), 'utf8'));
    expect(batch).toMatchObject({ status: 'finished', local: true });
    const trials = batch.runs.flatMap((run: any) => run.trials.map((trial: any) => [run.case.id, trial.status]));
    expect(trials).toEqual([...Array(3).fill(['say-hello', 'passed']), ...Array(3).fill(['say-bye', 'passed'])]);
    // The validator from the file judged say-bye.
    const bye = batch.runs.find((run: any) => run.case.id === 'say-bye');
    expect(bye.trials[0].validations).toEqual([expect.objectContaining({ status: 'passed', message: 'out.txt holds "bye"' })]);
    expect(fs.readFileSync(path.join(dir, 'assay-junit.xml'), 'utf8')).toContain('<testsuite');
  });

  it("writes a workflow that installs, serves, runs the suite with --local and uploads eval's JUnit and JSON files", async () => {
    expect((await assay(['init', '--package', 'git+https://example.com/assay.git#v1'])).code).toBe(0);
    const workflow = parse(fs.readFileSync(path.join(dir, '.github/workflows/assay.yml'), 'utf8'));
    const job = workflow.jobs.eval;
    expect(job.env.ASSAY_PACKAGE).toBe('git+https://example.com/assay.git#v1');
    const runs: string[] = job.steps.filter((step: any) => step.run).map((step: any) => step.run);
    expect(runs.join('\n')).toContain('npm pack --pack-destination "$RUNNER_TEMP" "$ASSAY_PACKAGE"');
    expect(runs.join('\n')).toContain('npm install -g --no-audit --no-fund "$RUNNER_TEMP/$tarball"');
    expect(runs.join('\n')).toContain('nohup assay serve');
    const evalLine = runs.join('\n').match(/assay eval --local evals\/suite\.yaml .*$/m)?.[0] ?? '';
    const junit = /--junit (\S+)/.exec(evalLine)?.[1];
    const json = /--json (\S+)/.exec(evalLine)?.[1];
    const upload = job.steps.find((step: any) => step.uses?.startsWith('actions/upload-artifact@'));
    expect(upload).toMatchObject({ if: 'always()' });
    expect(upload.with.path.trim().split('\n')).toEqual([junit, json]);
    // Without --package, the repository variable says where from.
    fs.rmSync(path.join(dir, '.github'), { recursive: true });
    fs.rmSync(path.join(dir, 'evals'), { recursive: true });
    expect((await assay(['init'])).code).toBe(0);
    expect(parse(fs.readFileSync(path.join(dir, '.github/workflows/assay.yml'), 'utf8')).jobs.eval.env.ASSAY_PACKAGE).toBe('${{ vars.ASSAY_PACKAGE }}');
  });

  it('refuses to overwrite: names every file already there and writes nothing', async () => {
    fs.mkdirSync(path.join(dir, 'evals'));
    fs.writeFileSync(path.join(dir, 'evals/suite.yaml'), 'mine\n');
    fs.mkdirSync(path.join(dir, '.github/workflows'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.github/workflows/assay.yml'), 'also mine\n');
    const result = await assay(['init']);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'assay init: evals/suite.yaml, .github/workflows/assay.yml already exist; nothing was written. Move them away and run it again.\n',
    });
    expect(filesIn(dir).sort()).toEqual(['.github/workflows/assay.yml', 'evals/suite.yaml']);
    expect(fs.readFileSync(path.join(dir, 'evals/suite.yaml'), 'utf8')).toBe('mine\n');
    expect(fs.readFileSync(path.join(dir, '.github/workflows/assay.yml'), 'utf8')).toBe('also mine\n');
  });

  it('refuses arguments it does not take, exit 64, pointing to its help', async () => {
    const result = await assay(['init', 'somewhere']);
    expect(result.code).toBe(64);
    expect(result.stderr).toBe(`assay init: too many arguments for 'init'. Expected 0 arguments but got 1.\nRun "assay init --help" for its options.\n`);
    expect(filesIn(dir)).toEqual([]);
    const help = await assay(['init', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--package <spec>');
  });
});
