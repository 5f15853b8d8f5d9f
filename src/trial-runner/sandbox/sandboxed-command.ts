import { constants as osConstants } from 'node:os';
import { Clock, systemClock } from '#shared/clock';
import { changesProgramStart } from '#shared/reserved-variables';
import { reportSandboxStart } from '../execution-observers';
import type { OutputCollector } from '../output/captured-output';
import { LaunchedProcess, ProcessLauncher, sharedSpawnHelper } from './process-launcher';
import type { SandboxLaunch } from './sandbox-driver';

export interface CommandRequest {
  launch: SandboxLaunch;
  env: Record<string, string>;
  /** Written to the command's stdin, then closed; null gives it /dev/null. */
  stdin: string | null;
  timeoutMs: number;
  signal?: AbortSignal;
  collector: OutputCollector;
  /** How the command is started: through the shared spawn helper unless told otherwise. */
  launcher?: ProcessLauncher;
  /** Where the command's start and end times come from (tests may control it). */
  clock?: Clock;
}

export interface CommandResult {
  /** The exit status as a shell reports it: the exit code, or 128 + the signal's number. */
  status: number;
  /** The exit code; null when the command was killed or never started. */
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** Why the command never started (spawn or sandbox set-up failed): a fault of the service. */
  startFailure: string | null;
  /** The spawn error's code when the command never started (E2BIG: arguments or environment too large). */
  startErrorCode: string | null;
  startedAtMillis: number;
  finishedAtMillis: number;
}

/** After the command exits, how long to wait for a straggler that escaped the group to free the pipes. */
const PIPE_GRACE_MS = 2000;

/**
 * Runs one launch to its end. The command leads its own process group (spawned detached), so a
 * timeout or an abort kills everything it started with kill(-pid); under bubblewrap the sandbox's
 * pid namespace dies with it. The group is also killed after a normal exit, so that a background
 * process left by one step cannot outlive it (and hold the output pipes open).
 */
export function runCommand(request: CommandRequest): Promise<CommandResult> {
  return new Promise((resolve) => new RunningCommand(request, resolve).start());
}

class RunningCommand {
  private child: LaunchedProcess | null = null;
  private readonly clock: Clock;
  private readonly startedAtMillis: number;
  private statusReport = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private spawnError: NodeJS.ErrnoException | null = null;
  private timedOut = false;
  private aborted = false;
  private timers: NodeJS.Timeout[] = [];
  private settled = false;

  constructor(
    private readonly request: CommandRequest,
    private readonly resolve: (result: CommandResult) => void,
  ) {
    this.clock = request.clock ?? systemClock;
    this.startedAtMillis = this.clock.now().getTime();
  }

  start(): void {
    const { launch, env, stdin } = this.request;
    const launcher = this.request.launcher ?? sharedSpawnHelper;
    this.child = launcher.launch({ file: launch.file, args: launch.args, cwd: launch.cwd, env: launchEnv(env), stdin, fd3: launch.reportsStatus });
    this.wire(this.child);
    this.timers.push(setTimeout(() => this.kill('timeout'), this.request.timeoutMs));
    if (this.request.signal?.aborted) this.kill('abort');
    else this.request.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private wire(child: LaunchedProcess): void {
    // A helper names the pid only once it spawned: a timeout or an abort before that kills the group now.
    child.on('spawned', (pid: number) => {
      if (this.timedOut || this.aborted) killGroup(pid);
    });
    child.on('data', (fd: number, chunk: Buffer) => {
      if (fd === 3) this.onStatus(chunk);
      else this.request.collector.push(chunk);
    });
    child.on('spawnError', (error: NodeJS.ErrnoException) => {
      this.spawnError = error;
      this.finish();
    });
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      this.exit = { code, signal };
      killGroup(child.pid);
      this.timers.push(setTimeout(() => this.releasePipes(child), PIPE_GRACE_MS));
    });
    child.on('close', () => this.finish());
  }

  private readonly onAbort = () => this.kill('abort');

  /** bubblewrap's status report; its first line says the sandbox is up and the command started in it. */
  private onStatus(chunk: Buffer): void {
    if (this.statusReport === '') reportSandboxStart({ driver: 'bubblewrap', durationMs: this.clock.now().getTime() - this.startedAtMillis });
    this.statusReport += chunk.toString('utf8');
  }

  private kill(reason: 'timeout' | 'abort'): void {
    if (this.exit !== null || this.settled) return;
    if (reason === 'timeout') this.timedOut = true;
    else this.aborted = true;
    killGroup(this.child?.pid);
  }

  private releasePipes(child: LaunchedProcess): void {
    child.destroyPipes();
    this.finish();
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.request.signal?.removeEventListener('abort', this.onAbort);
    const status = this.exit === null ? 255 : (this.exit.code ?? 128 + signalNumber(this.exit.signal));
    this.resolve({
      status,
      exitCode: this.exit?.code ?? null,
      timedOut: this.timedOut,
      aborted: this.aborted,
      startFailure: this.startFailure(),
      startErrorCode: this.spawnError?.code ?? null,
      startedAtMillis: this.startedAtMillis,
      finishedAtMillis: this.clock.now().getTime(),
    });
  }

  private startFailure(): string | null {
    if (this.spawnError !== null) return `cannot start ${this.request.launch.file}: ${this.spawnError.code ?? this.spawnError.message}`;
    if (this.exit === null) return `${this.request.launch.file} ended without an exit status`;
    if (!this.request.launch.reportsStatus || this.timedOut || this.aborted) return null;
    // bubblewrap reports an exit code on fd 3 only once the command itself was executed.
    if (this.statusReport.includes('"exit-code"')) return null;
    const ownError = this.request.collector
      .keptText()
      .split('\n')
      .find((line) => line.startsWith('bwrap:'));
    return `the sandbox failed to start: ${ownError ?? `bwrap exited with ${this.exit.code ?? this.exit.signal}`}`;
  }
}

/** The command's environment without what would change how its launcher starts (LD_PRELOAD…). */
function launchEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !changesProgramStart(name)));
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === null ? 127 : ((osConstants.signals as Partial<Record<NodeJS.Signals, number>>)[signal] ?? 0);
}
