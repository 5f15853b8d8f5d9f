import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { CLI, freePort, ROOT, tempDir } from '../support/servers';

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface WorkflowStep {
  name?: string;
  uses?: string;
  run?: string;
}

/** npm needs these of the test's environment to reach its registry and cache; nothing else is passed on. */
const PASSED_ON =
  /^(HOME|USER|LANG|LC_[A-Z]+|(HTTPS?|NO|ALL)_PROXY|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR)|npm_config_(cache|registry|userconfig|cafile|nodedir))$/i;

/** A child to its end; `group`: in a process group of its own, whose id is kept to end what it left running. */
function run(program: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; groups?: number[] }): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.groups !== undefined });
    if (options.groups && child.pid !== undefined) options.groups.push(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Ends a process group, SIGKILL if it outlives SIGTERM by 10 s. */
async function endGroup(pgid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(-pgid, 'SIGTERM');
  for (let waited = 0; alive() && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  if (alive()) process.kill(-pgid, 'SIGKILL');
}

/**
 * Assay as a team installs it: `npm pack` in the checkout, then a project of theirs where the
 * checkout's `assay init` wrote the starter files, and the workflow's own shell steps run with
 * bash as GitHub's runner runs them: the install step installs the tarball into a fresh npm
 * prefix (no build on this side), the next starts the installed `assay serve`, the last runs the
 * starter suite with `assay eval --local`. The installed command then runs an example suite.
 */
describe('the package, packed and installed', () => {
  const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const work = tempDir('assay-pack-');
  const prefix = path.join(work, 'prefix');
  const project = path.join(work, 'project');
  const runnerTemp = path.join(work, 'runner-temp');
  const githubEnv = path.join(runnerTemp, 'github-env');
  const groups: number[] = [];
  let tarball = '';
  let env: NodeJS.ProcessEnv = {};

  /** What the workflow's steps wrote into GITHUB_ENV, for the steps after them. */
  const exported = (): Record<string, string> =>
    Object.fromEntries(
      fs
        .readFileSync(githubEnv, 'utf8')
        .split('\n')
        .filter((line) => line.includes('='))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );

  beforeAll(async () => {
    fs.mkdirSync(project);
    fs.mkdirSync(runnerTemp);
    fs.writeFileSync(githubEnv, '');
    const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => PASSED_ON.test(name)));
    env = { ...base, PATH: `${path.join(prefix, 'bin')}:${process.env.PATH ?? ''}`, TMPDIR: tempDir('assay-pack-tmp-'), CI: 'true' };
  });

  afterAll(async () => {
    await Promise.all(groups.map(endGroup));
  });

  it('packs dist/ with the licence, the README and package.json, and none of the sources or tests', async () => {
    // The tarball of the tree as built (npm test builds first); --ignore-scripts: packing builds nothing here.
    const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, env });
    expect(packed.code).toBe(0);
    const [manifest] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    expect(manifest.filename).toBe(`assay-${version}.tgz`);
    tarball = path.join(work, manifest.filename);
    const files = manifest.files.map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/cli.js', 'dist/main.js', 'dist/validator.d.ts', 'dist/viewer/index.html']),
    );
    expect(files.filter((file) => file.endsWith('.py')).length).toBeGreaterThan(0); // the assets copied beside the JavaScript
    expect(files.filter((file) => !file.startsWith('dist/') && !['LICENSE', 'README.md', 'package.json'].includes(file))).toEqual([]);
    expect(files.filter((file) => file.startsWith('dist/.build'))).toEqual([]); // the build's own marks
  });

  it('runs the workflow init wrote, as the runner would: installs the tarball into a fresh prefix, serves, and the starter suite passes', async () => {
    const init = await run(process.execPath, [CLI, 'init', '--package', tarball], { cwd: project, env });
    expect(init.code).toBe(0);
    const job = parse(fs.readFileSync(path.join(project, '.github/workflows/assay.yml'), 'utf8')).jobs.eval;
    const port = await freePort();
    const steps = (job.steps as WorkflowStep[]).filter((step) => step.run !== undefined);
    expect(steps.map((step) => step.name)).toEqual(['Install Assay', 'Start Assay on the runner', 'Run the suite']);
    for (const step of steps) {
      expect(step.run).not.toContain('${{'); // bash runs it as GitHub would: nothing for GitHub to fill in
      const stepEnv = {
        ...env,
        ...job.env,
        ASSAY_URL: `http://127.0.0.1:${port}`, // the job's own server, on a port free here
        RUNNER_TEMP: runnerTemp,
        GITHUB_ENV: githubEnv,
        npm_config_prefix: prefix, // npm install -g installs there: the runner's global prefix
        ...exported(),
      };
      const result = await run('bash', ['--noprofile', '--norc', '-e', '-c', step.run!], { cwd: project, env: stepEnv, groups });
      if (result.code !== 0) throw new Error(`The step "${step.name}" exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
      if (step.name === 'Install Assay') expect(result.stdout).toContain(`${version}\n`);
    }
    const batch = JSON.parse(fs.readFileSync(path.join(project, 'assay-results.json'), 'utf8'));
    expect(batch).toMatchObject({ status: 'finished', local: true });
    expect(batch.runs.flatMap((one: any) => one.trials.map((trial: any) => trial.status))).toEqual(Array(6).fill('passed'));
    expect(fs.readFileSync(path.join(project, 'assay-junit.xml'), 'utf8')).toContain('<testsuite');
    env = { ...env, ASSAY_URL: `http://127.0.0.1:${port}`, ASSAY_API_KEY: exported().ASSAY_API_KEY };
  }, 900_000);

  it('installed a working assay command of the packed version, out of the checkout', async () => {
    const installed = path.join(prefix, 'bin', 'assay');
    expect(fs.realpathSync(installed)).toBe(path.join(prefix, 'lib', 'node_modules', 'assay', 'dist', 'cli.js'));
    expect(await run(installed, ['--version'], { cwd: project, env })).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    const help = await run(installed, ['--help'], { cwd: project, env });
    expect(help.stdout).toMatch(/^Usage: assay <command>/);
  });

  it('runs an example suite with eval --local, its validator bundled by the installed package', async () => {
    const out = path.join(work, 'example.json');
    const suiteFile = path.join(ROOT, 'examples', 'fix-a-failing-test', 'suite.yaml');
    const ran = await run(path.join(prefix, 'bin', 'assay'), ['eval', '--local', suiteFile, '--no-progress', '--json', out], {
      cwd: project,
      env: { ...env, ASSAY_CONFIG: path.join(runnerTemp, 'assay-config.yaml') },
    });
    expect(ran.code).toBe(1); // the sloppy agent fails, as the example says
    const batch = JSON.parse(fs.readFileSync(out, 'utf8'));
    expect(batch.runs.map((one: any) => [one.variant.model, one.trials.map((trial: any) => trial.status)])).toEqual([
      ['careful-agent', ['passed', 'passed', 'passed']],
      ['sloppy-agent', ['failed', 'failed', 'failed']],
    ]);
  }, 120_000);

  /**
   * From a git URL the package is built where it is installed: npm clones the repository at its
   * HEAD (the commit under test), installs the build's tools there, `prepare` builds, npm packs
   * and installs it into the project. A global install from git is npm's bug (decision 0094).
   */
  it('installs from a git URL into a project, built on install, with a working assay command', async () => {
    const team = path.join(work, 'from-git');
    fs.mkdirSync(team);
    fs.writeFileSync(path.join(team, 'package.json'), JSON.stringify({ name: 'team-project', version: '1.0.0', private: true }));
    const installed = await run('npm', ['install', '--no-audit', '--no-fund', `git+file://${ROOT}`], { cwd: team, env });
    if (installed.code !== 0) throw new Error(`npm install from git exited ${installed.code}:\n${installed.stderr.slice(-4000)}`);
    const command = path.join(team, 'node_modules', '.bin', 'assay');
    expect(fs.realpathSync(command)).toBe(path.join(team, 'node_modules', 'assay', 'dist', 'cli.js'));
    // Built there: the package holds what the build makes, none of the sources.
    expect(fs.existsSync(path.join(team, 'node_modules', 'assay', 'dist', 'viewer', 'index.html'))).toBe(true);
    expect(fs.existsSync(path.join(team, 'node_modules', 'assay', 'src'))).toBe(false);
    expect(await run(command, ['--version'], { cwd: team, env })).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    const help = await run(command, ['--help'], { cwd: team, env });
    expect(help.stdout).toMatch(/^Usage: assay <command>/);
  }, 1_200_000);
});
