import * as fs from 'node:fs';
import * as path from 'node:path';
import { OutputCollector } from '../output/captured-output';
import { findHostTool } from './host-tools';
import { LaunchSpec, SpawnHelper } from './process-launcher';
import { runCommand } from './sandboxed-command';
import { tempDir } from '../../../test/support/temp-dirs';

const pythonMissing = findHostTool('python3') === null;
if (pythonMissing) console.warn('Skipping the Python spawn helper: python3 is not on the PATH (the Node helper is tested alone).');
const kinds = pythonMissing ? (['node'] as const) : (['python', 'node'] as const);

interface Collected {
  output: Map<number, Buffer>;
  exit: { code: number | null; signal: string | null } | null;
  spawnError: NodeJS.ErrnoException | null;
}

/** Launches straight through the helper and gathers every byte per descriptor until the command closes (or cannot start). */
function collect(helper: SpawnHelper, spec: LaunchSpec, feed?: (launched: ReturnType<SpawnHelper['launch']>) => void): Promise<Collected> {
  return new Promise((resolve) => {
    const chunks = new Map<number, Buffer[]>();
    const collected: Collected = { output: new Map(), exit: null, spawnError: null };
    const done = () => {
      for (const [fd, parts] of chunks) collected.output.set(fd, Buffer.concat(parts));
      resolve(collected);
    };
    const launched = helper.launch(spec);
    launched.on('data', (fd: number, chunk: Buffer) => chunks.set(fd, [...(chunks.get(fd) ?? []), chunk]));
    launched.on('exit', (code: number | null, signal: string | null) => (collected.exit = { code, signal }));
    launched.on('spawnError', (error: NodeJS.ErrnoException) => {
      collected.spawnError = error;
      done();
    });
    launched.on('close', done);
    feed?.(launched);
  });
}

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** `sh -c script` in `cwd` through the helper, as a trial step runs it: its result and its output. */
function runIn(cwd: string, helper: SpawnHelper, script: string, stdin: string | null = null) {
  const collector = new OutputCollector(65536, 0);
  const launch = { file: 'sh', args: ['-c', script], cwd, reportsStatus: false };
  return runCommand({ launch, env, stdin, timeoutMs: 20000, collector, launcher: helper }).then((result) => ({ ...result, output: collector.keptText() }));
}

/** Trial commands start through a spawn helper process: each kind must relay faithfully and survive its own death. */
describe.each(kinds)('the %s spawn helper', (kind) => {
  const cwd = tempDir('assay-spawn-');
  const run = (helper: SpawnHelper, script: string, stdin: string | null = null) => runIn(cwd, helper, script, stdin);

  it('relays stdin, stdout, stderr and the exit code', async () => {
    const helper = new SpawnHelper(kind);
    const result = await run(helper, 'cat; echo err >&2; exit 3', 'from stdin\n');
    expect(result).toMatchObject({ status: 3, exitCode: 3, timedOut: false, startFailure: null });
    expect(result.output).toContain('from stdin');
    expect(result.output).toContain('err');
  });

  it('reports a command that cannot start as a start failure', async () => {
    const helper = new SpawnHelper(kind);
    const collector = new OutputCollector(1024, 0);
    const launch = { file: '/no/such/binary', args: [], cwd, reportsStatus: false };
    const result = await runCommand({ launch, env, stdin: null, timeoutMs: 5000, collector, launcher: helper });
    expect(result.startFailure).toContain('ENOENT');
  });

  it('kills the whole process group on a timeout', async () => {
    const helper = new SpawnHelper(kind);
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
    const helper = new SpawnHelper(kind);
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

  const spec = (script: string, extra: Partial<LaunchSpec> = {}): LaunchSpec => ({
    file: '/bin/sh',
    args: ['-c', script],
    cwd,
    env,
    stdin: null,
    fd3: false,
    ...extra,
  });

  it('relays output byte for byte, all 256 byte values and megabytes of it', async () => {
    const helper = new SpawnHelper(kind);
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, index) => index));
    fs.writeFileSync(path.join(cwd, 'bytes.bin'), bytes);
    const binary = await collect(helper, spec('cat bytes.bin'));
    expect(binary.output.get(1)).toEqual(bytes);
    const large = await collect(helper, spec('head -c 3000000 /dev/zero'));
    expect(large.output.get(1)?.length).toBe(3_000_000);
    expect(large.exit).toEqual({ code: 0, signal: null });
  });

  it('writes a stdin of megabytes whole, and a kept-open stdin as it is fed', async () => {
    const helper = new SpawnHelper(kind);
    const big = await collect(helper, spec('wc -c', { stdin: 'x'.repeat(2 * 1024 * 1024) }));
    expect(big.output.get(1)?.toString().trim()).toBe(String(2 * 1024 * 1024));
    const fed = await collect(helper, spec('cat', { stdin: 'first\n', keepStdinOpen: true }), (launched) => {
      launched.write('second\n');
      setTimeout(() => {
        launched.write('third\n');
        launched.endStdin();
      }, 50);
    });
    expect(fed.output.get(1)?.toString()).toBe('first\nsecond\nthird\n');
  });

  it('gives the command a status pipe on fd 3 when asked, and none otherwise', async () => {
    const helper = new SpawnHelper(kind);
    const withStatus = await collect(helper, spec('echo started >&3; echo out', { fd3: true }));
    expect(withStatus.output.get(3)?.toString()).toBe('started\n');
    expect(withStatus.output.get(1)?.toString()).toBe('out\n');
    const without = await collect(helper, spec('echo started >&3 || echo no fd 3'));
    expect(without.output.get(3)).toBeUndefined();
    expect(without.output.get(1)?.toString()).toBe('no fd 3\n');
  });

  it("hands a command no descriptor of the helper's: only 0 to 2, and 3 when asked", async () => {
    const helper = new SpawnHelper(kind);
    const listing = 'for fd in 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do [ -e /proc/$$/fd/$fd ] && echo $fd; done; true';
    const plain = await collect(helper, spec(listing));
    expect(plain.output.get(1)?.toString() ?? '').toBe('');
    const withStatus = await collect(helper, spec(listing, { fd3: true }));
    expect(withStatus.output.get(1)?.toString()).toBe('3\n');
  });

  it('passes a lone surrogate in a variable as U+FFFD, as Node does, rather than failing the start', async () => {
    const helper = new SpawnHelper(kind);
    const result = await collect(helper, { ...spec('printf %s "$ODD"'), env: { ...env, ODD: 'a\ud800b' } });
    expect(result.spawnError).toBeNull();
    expect(result.output.get(1)).toEqual(Buffer.from('a\ufffdb', 'utf8'));
  });

  it('says why a command cannot start: too large an environment, a missing directory', async () => {
    const helper = new SpawnHelper(kind);
    const tooBig = await collect(helper, { ...spec('true'), env: { ...env, HUGE: 'x'.repeat(200 * 1024) } });
    expect(tooBig.spawnError?.code).toBe('E2BIG');
    const nowhere = await collect(helper, { ...spec('true'), cwd: path.join(cwd, 'no-such-directory') });
    expect(nowhere.spawnError?.code).toBe('ENOENT');
    const after = await run(helper, 'echo still serving');
    expect(after.output.trim()).toBe('still serving');
  });

  it('starts each command as the leader of a new session, in the directory and with exactly the environment given', async () => {
    const helper = new SpawnHelper(kind);
    const result = await collect(helper, {
      ...spec('echo "$$ $(ps -o sid= -p $$ | tr -d " ")"; pwd; env | grep -v "^PWD=" | sort'),
      env: { PATH: env.PATH, ONLY: 'this' },
    });
    const [ids, directory, ...variables] = (result.output.get(1)?.toString() ?? '').trim().split('\n');
    const [pid, session] = ids.split(' ');
    expect(session).toBe(pid);
    expect(directory).toBe(fs.realpathSync(cwd));
    expect(variables.filter((line) => !/^(SHLVL|_|OLDPWD)=/.test(line))).toEqual(['ONLY=this', `PATH=${env.PATH}`]);
  });
});

describe('a python3 that cannot run the helper', () => {
  it('fails the commands sent to it as unstartable, then hands every later command to the Node helper', async () => {
    const bin = tempDir('assay-fake-python-');
    fs.writeFileSync(path.join(bin, 'python3'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const cwd = tempDir('assay-spawn-');
    const run = (helper: SpawnHelper, script: string) => runIn(cwd, helper, script);
    const savedPath = process.env.PATH;
    process.env.PATH = `${bin}:${savedPath ?? ''}`;
    try {
      const helper = new SpawnHelper('python');
      const first = await run(helper, 'echo first');
      expect(first.startFailure).toContain('EHELPER');
      expect(helper.helperKind).toBe('node');
      const second = await run(helper, 'echo second');
      expect(second).toMatchObject({ status: 0, startFailure: null });
      expect(second.output.trim()).toBe('second');
    } finally {
      process.env.PATH = savedPath;
    }
  });
});
