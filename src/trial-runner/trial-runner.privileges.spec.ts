import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { bareSpawn } from './sandbox/bare-spawn';
import { describeWithBubblewrap } from '../../test/support/bubblewrap';
import { BUBBLEWRAP, harnessStep, TempDirs, TEST_SANDBOXES, testRunner, trialSpec } from '../../test/support/trial-fixtures';

const dirs = new TempDirs();
const SECRET = `root-only-${randomBytes(8).toString('hex')}`;
/** Host files the test plants and removes: a root-only file in /etc, a world-readable one outside the system paths. */
const rootOnlyFile = `/etc/assay-test-${randomBytes(6).toString('hex')}`;
const hostDirectory = `/var/tmp/assay-test-${randomBytes(6).toString('hex')}`;
const asRoot = process.getuid?.() === 0;
if (!asRoot)
  process.stderr.write('Skipping the root-only tests of trial-runner-privileges.spec.ts: trials get a user of their own only when the server runs as root\n');

afterAll(() => {
  dirs.removeAll();
  rmSync(rootOnlyFile, { force: true });
  rmSync(hostDirectory, { recursive: true, force: true });
});

describeWithBubblewrap('TrialRunner: a bubblewrap trial runs as a user of its own and sees only the system', () => {
  (asRoot ? it : it.skip)('cannot read /etc/shadow or a root-only file, holds no capability, and does not run as root', async () => {
    writeFileSync(rootOnlyFile, SECRET, { mode: 0o600 });
    const { runner, dataDir } = testRunner(dirs);
    writeFileSync(path.join(dataDir, 'root-only.key'), SECRET, { mode: 0o600 });
    const run = `echo "uid=$(id -u) user=$(whoami)"; node -e "console.log('node-user=' + require('os').userInfo().username)"; head -c 40 /etc/shadow; cat ${rootOnlyFile}; grep CapEff /proc/self/status; touch /etc/assay-written && echo wrote-etc; true`;
    const outcome = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run } }));
    const output = harnessStep(outcome, run).output;
    expect(output).toMatch(/^uid=(\d+) user=assay-trial$/m);
    expect(Number(/^uid=(\d+)/m.exec(output)![1])).toBeGreaterThan(0);
    expect(output).toContain('node-user=assay-trial');
    expect(output).not.toContain('root:');
    expect(output).not.toContain(SECRET);
    expect(output).toContain(`${rootOnlyFile}: Permission denied`);
    expect(output).toMatch(/CapEff:\s+0+$/m);
    expect(output).not.toContain('wrote-etc');
  });

  it('sees the system paths, not the rest of the host (/var, /srv, /opt…), and can write its workspace and home', async () => {
    mkdirSync(hostDirectory, { recursive: true });
    writeFileSync(path.join(hostDirectory, 'visible.txt'), 'world-readable host file', { mode: 0o644 });
    const { runner } = testRunner(dirs);
    const run = `cat ${hostDirectory}/visible.txt; test -x /bin/sh && echo has-sh; git --version >/dev/null && echo has-git; node -e "console.log('has-node')"; echo w > here.txt && echo h > "$HOME/h.txt" && echo wrote-own`;
    const outcome = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run }, verify: 'test -f here.txt' }));
    const output = harnessStep(outcome, run).output;
    expect(output).not.toContain('world-readable host file');
    expect(output).toContain('No such file or directory');
    expect(output).toContain('has-sh\nhas-git\nhas-node\nwrote-own');
    expect(outcome.status).toBe('passed');
    expect(outcome.filesChanged).toEqual(['here.txt']);
  });
});

describeWithBubblewrap('TrialRunner: per-trial limits (ASSAY_CONFIG limits) fail the agent with the limit named', () => {
  const limited = (limits: Record<string, number>) => testRunner(dirs, { rawConfig: { sandboxes: TEST_SANDBOXES, limits } }).runner;

  (asRoot ? it : it.skip)('a fork loop stops at limits.processes', async () => {
    const run = 'for i in $(seq 1 100); do sleep 5 & done; wait';
    const outcome = await limited({ processes: 32 }).run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run }, verify: 'test -f done' }));
    expect(outcome).toMatchObject({ status: 'failed', voidFields: [], serviceFault: false });
    expect(outcome.failure).toContain('limits.processes (32)');
  });

  it('a write past the private /tmp stops at limits.tmpMb', async () => {
    const run = 'dd if=/dev/zero of=/tmp/big bs=1M count=20';
    const outcome = await limited({ tmpMb: 8 }).run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run }, verify: 'test -f done' }));
    expect(harnessStep(outcome, run).output).toContain('No space left on device');
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(outcome.failure).toContain('limits.tmpMb (8 MB)');
  });

  it('a limit read from the output names the failure only when verify fails: an agent that recovered passes', async () => {
    const run = 'echo "sh: fork: Resource temporarily unavailable" >&2; echo done > done; exit 1';
    const outcome = await limited({ processes: 32 }).run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run }, verify: 'test -f done' }));
    expect(outcome).toMatchObject({ status: 'passed', failure: null, exitCode: 1 });
  });

  it('/dev/shm is writable by the trial and bounded by limits.tmpMb too', async () => {
    const run = 'dd if=/dev/zero of=/dev/shm/small bs=1M count=2 && echo shm-ok; dd if=/dev/zero of=/dev/shm/big bs=1M count=20';
    const outcome = await limited({ tmpMb: 8 }).run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run }, verify: 'test -f done' }));
    const output = harnessStep(outcome, run).output;
    expect(output).toContain('shm-ok');
    expect(output).toContain('No space left on device');
    expect(outcome).toMatchObject({ status: 'failed' });
  });

  it('a file larger than limits.workspaceMb is cut, and the trial fails', async () => {
    const run = 'dd if=/dev/zero of=big bs=1M count=20';
    const outcome = await limited({ workspaceMb: 8 }).run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run } }));
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(outcome.failure).toContain('limits.workspaceMb (8 MB)');
    expect(outcome.verifySteps).toEqual([]);
  });

  it('files that together outgrow limits.workspaceMb fail the trial, measured after the step', async () => {
    const run = 'dd if=/dev/zero of=a bs=1M count=6 && dd if=/dev/zero of=b bs=1M count=6';
    const outcome = await limited({ workspaceMb: 8 }).run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run } }));
    expect(harnessStep(outcome, run).exitCode).toBe(0);
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(outcome.failure).toMatch(/holds 1[2-3] MB, over limits\.workspaceMb \(8 MB\)/);
  });

  it('an allocation past limits.memoryMb fails', async () => {
    const run = `node -e "const a = []; for (;;) a.push(Buffer.alloc(16 * 1024 * 1024, 1))"`;
    const outcome = await limited({ memoryMb: 128 }).run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run }, verify: 'test -f done' }));
    expect(outcome).toMatchObject({ status: 'failed' });
    expect(outcome.failure).toContain('limits.memoryMb (128 MB)');
  });

  it('a set-up step that hits a limit voids the trial, naming the step', async () => {
    const install = 'dd if=/dev/zero of=big bs=1M count=20';
    const outcome = await limited({ workspaceMb: 8 }).run(trialSpec({ sandbox: BUBBLEWRAP, profile: { install, run: 'true' } }));
    expect(outcome).toMatchObject({ status: 'void', voidFields: ['install'], serviceFault: false });
    expect(outcome.failure).toMatch(/^install hit a limit: .*limits\.workspaceMb \(8 MB\)/);
  });

  it('trials within the limits pass as before', async () => {
    const run = 'dd if=/dev/zero of=/tmp/small bs=1M count=2 && dd if=/dev/zero of=small bs=1M count=2';
    const outcome = await limited({ processes: 64, tmpMb: 8, workspaceMb: 8, memoryMb: 512 }).run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run } }));
    expect(outcome).toMatchObject({ status: 'passed', failure: null, exitCode: 0 });
    expect(outcome.filesChanged).toEqual(['small']);
  });
});

describeWithBubblewrap('TrialRunner: reserved names never change how the sandbox starts', () => {
  it('skips PATH, LD_PRELOAD and NODE_OPTIONS from any layer, keeps connector values and other variables', async () => {
    const { runner } = testRunner(dirs);
    const env = { PATH: '/nonexistent', LD_PRELOAD: '/nonexistent/evil.so', ASSAY_HARNESS_API_KEY: 'connector-value', MY_SETTING: 'kept' };
    const profile = { run: 'echo ran > out.txt', env: { NODE_OPTIONS: '--require /nonexistent.js', HOME: '/nonexistent' } };
    const verify =
      'test "$PATH" != /nonexistent && test -z "$LD_PRELOAD" && test -z "$NODE_OPTIONS" && test "$HOME" != /nonexistent && test "$ASSAY_HARNESS_API_KEY" = connector-value && test "$MY_SETTING" = kept && node -e 0';
    const outcome = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, env, profile, verify }));
    expect(outcome).toMatchObject({ status: 'passed', failure: null });
  });
});

describe('the process that starts a sandbox never gets a name that changes how programs start', () => {
  it('drops LD_PRELOAD, GLIBC_TUNABLES and BASH_ENV at spawn, whatever the caller passed, and keeps the rest', async () => {
    const workspace = dirs.make('assay-spawn-');
    const env = { PATH: '/usr/bin:/bin', LD_PRELOAD: '/nonexistent/evil.so', GLIBC_TUNABLES: 'glibc.malloc.check=3', BASH_ENV: '/nonexistent/rc', KEPT: 'yes' };
    const result = await bareSpawn('process', workspace, 'echo "[$LD_PRELOAD][$GLIBC_TUNABLES][$BASH_ENV][$KEPT]"', { env });
    expect(result.output.trim()).toBe('[][][][yes]');
  });
});
