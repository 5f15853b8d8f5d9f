import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { changesProgramStart } from '#shared/reserved-variables';
import { shellQuote } from '../harness/harness-driver';
import type { TrialSession } from '../trial-session';
import { SERVICE_FILES } from '../trial-turns';
import { interrupted, TrialVoid } from '../trial-verdict';
import { JudgeAnswer, JudgeRequest, MAX_PROTOCOL_LINE_CHARS, ModuleContextData, ModuleMessage, parseModuleMessage, ServerMessage } from './module-protocol';

export interface ModuleRunRequest {
  mode: 'validator' | 'prepare' | 'judge';
  /** The exported function's name (the judge form's name). */
  name: string;
  /** The transpiled CommonJS module; null for the judge form, which has none. */
  code: string | null;
  judge?: Record<string, unknown>;
  context: ModuleContextData;
  timeoutMs: number;
  /** Answers a judge call; a rejection's message is what the module's `ctx.judge` throws. */
  onJudge(request: JudgeRequest): Promise<JudgeAnswer>;
  /** Called for each message the module logged, as it arrives. */
  onLog(level: 'stdout' | 'stderr' | 'log', text: string, at: number): void;
}

export type ModuleEnd = { kind: 'result'; value: unknown } | { kind: 'error'; failure: string; detail: string | null };

export interface ModuleRunResult {
  end: ModuleEnd;
  exitCode: number | null;
  startedAt: number;
  durationMs: number;
}

const CHILD_SCRIPT = path.join(__dirname, 'validator-child.js');
/** What is kept of the process's own stderr (Node's crash report before the protocol started). */
const STDERR_CHARS = 16_000;
const PIPE_GRACE_MS = 2000;
/** After its result, how long the process has to exit by itself before its group is killed. */
const EXIT_GRACE_MS = 1000;

/**
 * Runs a module in the trial's sandbox: the same driver, user, limits and network rule as the
 * trial's commands, through the driver's `launch`. The process is spawned here rather than by the
 * spawn helper because its stdin stays open for the whole conversation (judge answers). Its files
 * (the child script and the module) are written beside the workspace, where the sandbox sees them
 * and the workspace's listing does not, and removed after the run.
 */
export async function runModule(session: TrialSession, request: ModuleRunRequest): Promise<ModuleRunResult> {
  if (session.signal?.aborted) throw interrupted();
  const directory = path.join(session.directory.root, `validation-${randomBytes(6).toString('hex')}`);
  await mkdir(directory, { mode: 0o755 });
  try {
    const childFile = path.join(directory, 'child.cjs');
    await copyFile(CHILD_SCRIPT, childFile);
    const moduleFile = request.code === null ? null : path.join(directory, 'module.cjs');
    if (moduleFile !== null) await writeFile(moduleFile, request.code ?? '', { mode: 0o644, flag: 'wx' });
    return await new ModuleProcess(session, request, childFile, moduleFile).run();
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

class ModuleProcess {
  private child: ChildProcess | null = null;
  private stdoutBuffer = '';
  private stderrText = '';
  private statusReport = '';
  private end: ModuleEnd | null = null;
  private startError: NodeJS.ErrnoException | null = null;
  private exitCode: number | null = null;
  private exited = false;
  private aborted = false;
  private readonly startedAt: number;

  constructor(
    private readonly session: TrialSession,
    private readonly request: ModuleRunRequest,
    private readonly childFile: string,
    private readonly moduleFile: string | null,
  ) {
    this.startedAt = session.settings.clock.now().getTime();
  }

  run(): Promise<ModuleRunResult> {
    return new Promise((resolve, reject) => {
      const child = this.spawn();
      const timer = setTimeout(
        () => this.stop({ kind: 'error', failure: `timed out after ${this.request.timeoutMs} ms`, detail: null }),
        this.request.timeoutMs,
      );
      const onAbort = () => {
        this.aborted = true;
        killGroup(child.pid);
      };
      this.session.signal?.addEventListener('abort', onAbort, { once: true });
      child.on('error', (error: NodeJS.ErrnoException) => {
        if (child.pid === undefined) this.startError = error;
      });
      child.on('exit', (code) => {
        this.exited = true;
        this.exitCode = code;
        killGroup(child.pid);
        // A straggler that left the group may hold the pipes: stop waiting for it.
        setTimeout(() => child.stdio.forEach((stream) => stream?.destroy()), PIPE_GRACE_MS).unref();
      });
      child.on('close', () => {
        clearTimeout(timer);
        this.session.signal?.removeEventListener('abort', onAbort);
        if (this.aborted) {
          reject(interrupted());
          return;
        }
        const failure = this.sandboxFailure();
        if (failure !== null) {
          reject(new TrialVoid(failure, ['sandbox'], { serviceFault: true }));
          return;
        }
        const durationMs = this.session.settings.clock.now().getTime() - this.startedAt;
        resolve({ end: this.end ?? this.earlyExit(), exitCode: this.exitCode, startedAt: this.startedAt, durationMs });
      });
    });
  }

  private spawn(): ChildProcess {
    const { session } = this;
    const command = `exec ${shellQuote(process.execPath)} ${shellQuote(this.childFile)}`;
    const launch = session.sandbox.driver.launch(command, {
      trialDir: session.directory.root,
      workspace: session.directory.workspace,
      network: session.sandbox.network,
      user: session.sandbox.user,
      limits: session.settings.config.limits,
    });
    // The trial's base environment only: none of the organization's variables or connector values.
    const env = Object.fromEntries(Object.entries(session.baseEnv()).filter(([name]) => !changesProgramStart(name)));
    const child = spawn(launch.file, launch.args, {
      cwd: launch.cwd,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', launch.reportsStatus ? 'pipe' : 'ignore'],
    });
    this.child = child;
    child.stdin?.on('error', () => undefined);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.readProtocol(chunk));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.stderrText = keepTail(this.stderrText + chunk, STDERR_CHARS);
    });
    child.stdio[3]?.on('data', (chunk: Buffer) => {
      this.statusReport += chunk.toString('utf8');
    });
    this.send({
      type: 'start',
      mode: this.request.mode,
      file: this.moduleFile,
      name: this.request.name,
      judge: this.request.judge,
      context: this.request.context,
      serviceFiles: [...SERVICE_FILES],
    });
    return child;
  }

  private hasEnded(): boolean {
    return this.end !== null;
  }

  private readProtocol(chunk: string): void {
    if (this.hasEnded()) return;
    this.stdoutBuffer += chunk;
    let newline = this.stdoutBuffer.indexOf('\n');
    while (newline >= 0 && !this.hasEnded()) {
      const line = this.stdoutBuffer.slice(0, newline);
      this.stdoutBuffer = this.stdoutBuffer.slice(newline + 1);
      if (line.trim() !== '') this.receive(line);
      newline = this.stdoutBuffer.indexOf('\n');
    }
    if (!this.hasEnded() && this.stdoutBuffer.length > MAX_PROTOCOL_LINE_CHARS) {
      this.stop({
        kind: 'error',
        failure: `wrote a line of more than ${MAX_PROTOCOL_LINE_CHARS} characters to stdout, which is not the protocol`,
        detail: null,
      });
    }
  }

  private receive(line: string): void {
    const message = parseModuleMessage(line);
    if ('garbage' in message) {
      this.stop({ kind: 'error', failure: `wrote something that is not the protocol to stdout: "${message.garbage}"`, detail: null });
      return;
    }
    this.handle(message);
  }

  private handle(message: ModuleMessage): void {
    const now = this.session.settings.clock.now().getTime();
    if (message.type === 'log') this.request.onLog(message.level, message.text, now);
    else if (message.type === 'judge') this.answerJudge(message.id, message.request);
    else if (message.type === 'result') this.stop({ kind: 'result', value: message.value });
    else this.stop({ kind: 'error', failure: `threw: ${message.message}`, detail: message.stack }, true);
  }

  private answerJudge(id: number, request: JudgeRequest): void {
    this.request.onJudge(request).then(
      (result) => this.send({ type: 'answer', id, result }),
      (error: unknown) => this.send({ type: 'answer', id, error: error instanceof Error ? error.message : String(error) }),
    );
  }

  private send(message: ServerMessage): void {
    if (this.exited || this.end !== null) return;
    this.child?.stdin?.write(`${JSON.stringify(message)}\n`);
  }

  /** The run's end is decided: the process group goes (one that answered exits by itself, given a moment). */
  private stop(end: ModuleEnd, exitsItself = end.kind === 'result'): void {
    if (this.end !== null) return;
    this.end = end;
    const pid = this.child?.pid;
    if (!exitsItself) killGroup(pid);
    else setTimeout(() => killGroup(pid), EXIT_GRACE_MS).unref();
    this.child?.stdin?.end();
  }

  private earlyExit(): ModuleEnd {
    const stderr = this.stderrText.trim();
    const lastLine = stderr.split('\n').pop() ?? '';
    const code = this.exitCode === null ? 'killed' : `exited with code ${this.exitCode}`;
    return { kind: 'error', failure: `${code} before answering${lastLine ? `: ${lastLine}` : ''}`, detail: stderr === '' ? null : stderr };
  }

  /** bubblewrap reports an exit code on fd 3 only once the command itself ran; none means the sandbox failed. */
  private sandboxFailure(): string | null {
    if (this.startError !== null) return `cannot start the validator's sandbox: ${this.startError.code ?? this.startError.message}`;
    if (this.child === null || this.child.stdio[3] === null || this.child.stdio[3] === undefined) return null;
    if (this.end !== null || this.statusReport.includes('"exit-code"')) return null;
    const ownError = this.stderrText.split('\n').find((line) => line.startsWith('bwrap:'));
    return `the sandbox failed to start: ${ownError ?? 'bwrap reported no exit status'}`;
  }
}

function keepTail(text: string, chars: number): string {
  return text.length <= chars ? text : text.slice(text.length - chars);
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
