import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tempDir } from './sqlite-log';

/**
 * Where a process's CPU goes in the kernel, from Linux's `perf` (sampling with call stacks):
 * what the V8 profile of the server cannot show. Used for the file system's share: making a
 * trial's directories and files costs kernel time that depends on the file system under the
 * trials root (on ext4 without a journal, each new inode is searched for past every inode freed
 * in the last seconds: `recently_deleted`). Absent `perf`, or without the right to sample the
 * process, the profile is skipped and says why.
 */
export interface KernelShares {
  /** Per cent of the process's samples with the symbol on the stack, by symbol. */
  sharePercent: Map<string, number>;
}

export class KernelProfile {
  private errors = '';

  private constructor(
    private readonly recorder: ChildProcess,
    private readonly dir: ReturnType<typeof tempDir>,
    private readonly file: string,
  ) {
    recorder.stderr?.on('data', (chunk: Buffer) => (this.errors = (this.errors + chunk.toString()).slice(-2000)));
    recorder.on('error', (error) => (this.errors += error.message));
  }

  /** Starts sampling the process, or says why perf cannot. */
  static start(pid: number): KernelProfile | { unavailable: string } {
    const probe = spawnSync('perf', ['--version'], { stdio: 'ignore' });
    if (probe.error !== undefined || probe.status !== 0) return { unavailable: 'perf is not installed (Debian: linux-perf)' };
    // Without root, perf samples the kernel only where kernel.perf_event_paranoid allows it (1 or less).
    if (process.getuid?.() !== 0 && paranoia() > 1) return { unavailable: 'kernel samples need root or kernel.perf_event_paranoid at 1 or less' };
    const dir = tempDir('perf');
    const file = `${dir.dir}/perf.data`;
    const recorder = spawn('perf', ['record', '--quiet', '-g', '-o', file, '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
    return new KernelProfile(recorder, dir, file);
  }

  /** Stops sampling and reads each symbol's share (its samples and its callees'), or says why there is none. */
  async stop(symbols: readonly string[]): Promise<KernelShares | { unavailable: string }> {
    if (this.recorder.pid !== undefined && this.recorder.exitCode === null && this.recorder.signalCode === null) {
      const exited = new Promise<void>((resolve) => this.recorder.once('exit', () => resolve()));
      this.recorder.kill('SIGINT');
      await exited;
    }
    try {
      const report = spawnSync('perf', ['report', '-i', this.file, '--children', '--sort', 'sym', '--stdio', '-g', 'none'], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      if (report.status !== 0)
        return { unavailable: `perf recorded nothing it could report: ${(this.errors || report.stderr).trim().split('\n').pop() ?? ''}` };
      const sharePercent = new Map<string, number>(symbols.map((symbol) => [symbol, 0]));
      for (const line of report.stdout.split('\n')) {
        // "    37.30%     0.05%  [k] __ext4_new_inode": the first column counts the callees too.
        const match = /^\s*([\d.]+)%\s+[\d.]+%\s+\[[k.]\]\s+(\S+)\s*$/.exec(line);
        if (match !== null && sharePercent.has(match[2])) sharePercent.set(match[2], Number(match[1]));
      }
      return { sharePercent };
    } finally {
      this.dir.remove();
    }
  }
}

/** kernel.perf_event_paranoid; 2 (the usual default) when it cannot be read. */
function paranoia(): number {
  try {
    return Number(fs.readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim());
  } catch {
    return 2;
  }
}
