import * as fs from 'node:fs';
import * as path from 'node:path';
import { OutputCollector } from '#modules/evals/execution/output/captured-output';
import { SpawnHelper } from '#modules/evals/execution/sandbox/process-launcher';
import { runCommand } from '#modules/evals/execution/sandbox/sandboxed-command';
import { tempDir } from '../support/temp-dirs';

/** Trial commands start through the spawn helper process: it must relay faithfully and survive its own death. */
describe('the spawn helper', () => {
  const cwd = tempDir('assay-spawn-');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const run = (helper: SpawnHelper, script: string, stdin: string | null = null) => {
    const collector = new OutputCollector(65536, 0);
    const launch = { file: 'sh', args: ['-c', script], cwd, reportsStatus: false };
    return runCommand({ launch, env, stdin, timeoutMs: 20000, collector, launcher: helper }).then((result) => ({ ...result, output: collector.keptText() }));
  };

  it('relays stdin, stdout, stderr and the exit code', async () => {
    const helper = new SpawnHelper();
    const result = await run(helper, 'cat; echo err >&2; exit 3', 'from stdin\n');
    expect(result).toMatchObject({ status: 3, exitCode: 3, timedOut: false, startFailure: null });
    expect(result.output).toContain('from stdin');
    expect(result.output).toContain('err');
  });

  it('reports a command that cannot start as a start failure', async () => {
    const helper = new SpawnHelper();
    const collector = new OutputCollector(1024, 0);
    const launch = { file: '/no/such/binary', args: [], cwd, reportsStatus: false };
    const result = await runCommand({ launch, env, stdin: null, timeoutMs: 5000, collector, launcher: helper });
    expect(result.startFailure).toContain('ENOENT');
  });

  it('kills the whole process group on a timeout', async () => {
    const helper = new SpawnHelper();
    const collector = new OutputCollector(1024, 0);
    const launch = { file: 'sh', args: ['-c', 'sleep 30 & echo $! > child.pid; wait'], cwd, reportsStatus: false };
    const result = await runCommand({ launch, env, stdin: null, timeoutMs: 500, collector, launcher: helper });
    expect(result.timedOut).toBe(true);
    const child = Number(fs.readFileSync(path.join(cwd, 'child.pid'), 'utf8'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // Gone, or a zombie waiting for init to reap it: either way no longer running.
    const stat = fs.existsSync(`/proc/${child}/stat`) ? fs.readFileSync(`/proc/${child}/stat`, 'utf8') : null;
    expect(stat === null || /^\d+ \([^)]*\) Z/.test(stat)).toBe(true);
  });

  it('ends the commands of a helper that died as killed, then starts a new helper', async () => {
    const helper = new SpawnHelper();
    const running = run(helper, 'sleep 30');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const first = helper.helperPid!;
    process.kill(first, 'SIGKILL');
    const result = await running;
    expect(result).toMatchObject({ exitCode: null, status: 137 });
    const after = await run(helper, 'echo again');
    expect(after.output.trim()).toBe('again');
    expect(helper.helperPid).not.toBe(first);
  });
});
