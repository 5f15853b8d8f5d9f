import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { Clock, systemClock } from '#shared/clock';
import { changesProgramStart } from '#shared/reserved-variables';
import { reportSandboxStart } from '../execution-observers';
import type { OutputCollector } from '../output/captured-output';
import { LaunchedProcess, ProcessLauncher, sharedSpawnHelper } from './process-launcher';
import { SYNC_FILE_BYTES } from '../workspace/file-calls';
import type { SandboxLaunch } from './sandbox-driver';
import type { CommandResult } from './sandboxed-command';
import { STEP_FILE, STEP_INPUT, StepEnd, StepOutput, stepFile } from './session-protocol';

/** One command of a session: what `runCommand` takes, less the launch (the session is it). */
export interface SessionCommand {
  command: string;
  env: Record<string, string>;
  stdin: string | null;
  timeoutMs: number;
  signal?: AbortSignal;
  collector: OutputCollector;
}

/** After the session is killed, how long to wait for its pipes before ending the command anyway. */
const PIPE_GRACE_MS = 2000;

/**
 * One bubblewrap sandbox for a whole trial: its mounts, namespaces and limits are set up once and
 * a supervisor inside runs the trial's commands one after another (session-protocol.ts). Each
 * command still ends on its own, with its own output, exit status, environment and stdin, and
 * with nothing of it left running; a timeout or an abort kills the whole sandbox, as it killed the
 * command's own sandbox before, and the next command starts a new one. The control directory
 * (the step file and its stdin) is the service's, outside the trial's reach.
 */
export class SandboxSession {
  private child: LaunchedProcess | null = null;
  private running: RunningStep | null = null;
  private statusReport = '';
  /** A step ended here: the supervisor ran. */
  private ranSteps = false;
  private exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private closed = false;
  private readonly closedWaiters: Array<() => void> = [];
  private readonly clock: Clock;
  private readonly launcher: ProcessLauncher;
  private readonly launchedAtMillis: number;

  private constructor(
    private readonly launch: SandboxLaunch,
    private readonly controlDir: string,
    options: { clock?: Clock; launcher?: ProcessLauncher },
  ) {
    this.clock = options.clock ?? systemClock;
    this.launcher = options.launcher ?? sharedSpawnHelper;
    this.launchedAtMillis = this.clock.now().getTime();
  }

  /** Starts the sandbox; its supervisor waits for the first command. */
  static async start(launch: SandboxLaunch, controlDir: string, options: { clock?: Clock; launcher?: ProcessLauncher } = {}): Promise<SandboxSession> {
    // Root's: the trial can read its own step there, never change the next one. A later session of the trial finds it made.
    try {
      mkdirSync(controlDir, { mode: 0o755 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const session = new SandboxSession(launch, controlDir, options);
    session.spawn();
    return session;
  }

  /** False once the sandbox is gone or going (killed, or it ended): the next command needs a new one. */
  get usable(): boolean {
    return !this.killed && this.exited === null && !this.closed && this.running === null;
  }

  async run(request: SessionCommand): Promise<CommandResult> {
    if (!this.usable || this.child === null) throw new Error('The sandbox session cannot take a command now.');
    const startedAtMillis = this.clock.now().getTime();
    const env = Object.fromEntries(Object.entries(request.env).filter(([name]) => !changesProgramStart(name)));
    await writeControlFile(path.join(this.controlDir, STEP_FILE), stepFile(request.command, env));
    if (request.stdin !== null) await writeControlFile(path.join(this.controlDir, STEP_INPUT), request.stdin);
    const nonce = randomBytes(16).toString('hex');
    return new Promise((resolve) => {
      const step = new RunningStep(this, request, nonce, startedAtMillis, (result) => {
        this.running = null;
        resolve(result);
      });
      this.running = step;
      // The sandbox may have ended while the step file was written.
      if (this.exited !== null) step.sessionEnded(this.exited);
      if (this.closed) step.sessionClosed();
      if (this.exited === null) this.child?.write(`${nonce} ${request.stdin === null ? 0 : 1}\n`);
    });
  }

  /** Ends the sandbox (its supervisor exits when its stdin closes; killed if it does not at once). */
  async close(): Promise<void> {
    if (this.child === null) return;
    this.child.endStdin();
    const deadline = setTimeout(() => this.kill(), 200);
    await this.whenClosed();
    clearTimeout(deadline);
  }

  /** Kills everything in the sandbox (its pid namespace dies with bwrap); as soon as its pid is known, if it is not yet. */
  kill(): void {
    this.killed = true;
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  destroyPipes(): void {
    this.child?.destroyPipes();
  }

  get clockNow(): number {
    return this.clock.now().getTime();
  }

  whenClosed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => this.closedWaiters.push(resolve));
  }

  /** Why the sandbox never ran its supervisor, as a step launched on its own would have said it. */
  startFailure(): string | null {
    // bubblewrap reports an exit code on fd 3 only once the supervisor itself was executed.
    if (this.ranSteps || this.statusReport.includes('"exit-code"')) return null;
    if (this.spawnFailure !== null) return this.spawnFailure;
    return `the sandbox failed to start: ${this.ownError() ?? `bwrap exited with ${this.exited?.code ?? this.exited?.signal ?? 'no status'}`}`;
  }

  private ownError(): string | undefined {
    return this.stderrText
      .split('\n')
      .find((line) => line.startsWith('bwrap:'))
      ?.trim();
  }

  private stderrText = '';
  private spawnFailure: string | null = null;
  private killed = false;

  private spawn(): void {
    const { launch } = this;
    // The supervisor gets no variable of the service: each step's come from its own file.
    const child = this.launcher.launch({ file: launch.file, args: launch.args, cwd: launch.cwd, env: {}, stdin: null, fd3: true, keepStdinOpen: true });
    this.child = child;
    child.on('spawned', () => {
      if (this.killed) this.kill();
    });
    child.on('data', (fd: number, chunk: Buffer) => {
      if (fd === 3) this.onStatus(chunk);
      else if (fd === 1) this.running?.stdout(chunk);
      else {
        if (this.stderrText.length < 4096) this.stderrText += chunk.toString('utf8');
        this.running?.stderr(chunk);
      }
    });
    child.on('spawnError', (error: NodeJS.ErrnoException) => {
      this.spawnFailure = `cannot start ${launch.file}: ${error.code ?? error.message}`;
      this.onExit(null, null);
      this.onClose();
    });
    let grace: NodeJS.Timeout | undefined;
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      this.onExit(code, signal);
      // Nothing of the sandbox outlives its pid namespace; the grace is for the pipes' relay.
      grace = setTimeout(() => {
        child.destroyPipes();
        this.onClose();
      }, PIPE_GRACE_MS).unref();
    });
    child.on('close', () => {
      clearTimeout(grace);
      this.onClose();
    });
  }

  private onStatus(chunk: Buffer): void {
    if (this.statusReport === '') reportSandboxStart({ driver: 'bubblewrap', durationMs: this.clock.now().getTime() - this.launchedAtMillis });
    this.statusReport += chunk.toString('utf8');
  }

  stepEnded(): void {
    this.ranSteps = true;
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited !== null) return;
    this.exited = { code, signal };
    this.kill();
    this.running?.sessionEnded(this.exited);
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.running?.sessionClosed();
    this.closedWaiters.splice(0).forEach((resolve) => resolve());
  }
}

/** The command the session runs now: its output until its end line, its timeout, its abort. */
class RunningStep {
  private readonly output: StepOutput;
  private readonly timer: NodeJS.Timeout;
  private killedFor: 'timeout' | 'abort' | null = null;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private failure: string | null = null;
  private settled = false;

  constructor(
    private readonly session: SandboxSession,
    private readonly request: SessionCommand,
    nonce: string,
    private readonly startedAtMillis: number,
    private readonly resolve: (result: CommandResult) => void,
  ) {
    this.output = new StepOutput(
      nonce,
      (chunk) => request.collector.push(chunk),
      (end) => this.ended(end),
    );
    this.timer = setTimeout(() => this.kill('timeout'), request.timeoutMs);
    if (request.signal?.aborted) this.kill('abort');
    else request.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  stdout(chunk: Buffer): void {
    if (!this.settled) this.output.push(chunk);
  }

  stderr(chunk: Buffer): void {
    if (!this.settled) this.request.collector.push(chunk);
  }

  /** The supervisor said how the command ended: every process of it is gone. */
  private ended(end: StepEnd): void {
    if (this.killedFor !== null) return;
    this.session.stepEnded();
    if (end.status === null) this.failure = 'the sandbox failed to start: the workspace could not be entered';
    // Something of the step would not die: the sandbox goes with it, and the next command gets a new one.
    if (end.stale) this.session.kill();
    this.finish(end.status === null ? { code: null, signal: null } : { code: end.status, signal: null });
  }

  /** The sandbox ended before the command's end line (killed by us, or it died). */
  sessionEnded(exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    this.exit = this.killedFor === null ? exit : { code: null, signal: 'SIGKILL' };
  }

  /** The sandbox's pipes are closed: whatever it printed (its status report, bwrap's errors) has arrived. */
  sessionClosed(): void {
    if (this.exit === null) return;
    if (this.killedFor === null) {
      const { code, signal } = this.exit;
      this.failure = this.session.startFailure() ?? `the sandbox ended during the command: bwrap exited with ${code ?? signal}`;
    }
    this.finish(this.exit);
  }

  private readonly onAbort = () => this.kill('abort');

  private kill(reason: 'timeout' | 'abort'): void {
    if (this.settled || this.killedFor !== null) return;
    this.killedFor = reason;
    this.session.kill();
  }

  private finish(exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    if (this.settled) return;
    // Ended without its end line (killed): the last bytes held back in case they began one are output.
    this.output.flush();
    this.settled = true;
    clearTimeout(this.timer);
    this.request.signal?.removeEventListener('abort', this.onAbort);
    const killed = this.killedFor !== null;
    this.resolve({
      status: killed ? 137 : (exit.code ?? 255),
      exitCode: killed ? null : exit.code,
      timedOut: this.killedFor === 'timeout',
      aborted: this.killedFor === 'abort',
      startFailure: killed ? null : this.failure,
      startErrorCode: null,
      startedAtMillis: this.startedAtMillis,
      finishedAtMillis: this.session.clockNow,
    });
  }
}

/**
 * A file of the control directory (the service's; the trial cannot put anything in its way):
 * written synchronously when small, as a step and most inputs are (file-calls.ts), a large input
 * through the pool.
 */
async function writeControlFile(file: string, content: string): Promise<void> {
  if (Buffer.byteLength(content) <= SYNC_FILE_BYTES) writeFileSync(file, content, { mode: 0o644 });
  else await writeFile(file, content, { mode: 0o644 });
}
