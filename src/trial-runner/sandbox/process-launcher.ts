import { ChildProcess, spawn, StdioOptions } from 'node:child_process';
import { EventEmitter } from 'node:events';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { defaultHelperKind, HelperMessage, HelperTransport, LaunchSpec, SpawnHelperKind, startHelper } from './helper-transports';

export type { LaunchSpec } from './helper-transports';

/**
 * A started command, seen through its events: `spawned` (pid, when it is not known at once),
 * `data` (fd, chunk), `spawnError` (error), `exit` (code, signal), `close`. It leads its own
 * process group, which the caller kills by -pid.
 */
export interface LaunchedProcess extends EventEmitter {
  readonly pid: number | undefined;
  /** Stops waiting for output a straggler that escaped the group may still be holding. */
  destroyPipes(): void;
  /** Writes to a stdin kept open (`keepStdinOpen`); ignored once it is closed. */
  write(data: string): void;
  /** Closes a stdin kept open. */
  endStdin(): void;
}

export interface ProcessLauncher {
  launch(spec: LaunchSpec): LaunchedProcess;
}

/** Spawns from this process: the benchmark's bare baseline. */
export const directLauncher: ProcessLauncher = {
  launch(spec) {
    const launched = new EventEmitter() as EventEmitter & LaunchedProcess & { pid: number | undefined };
    launched.write = () => undefined;
    launched.endStdin = () => undefined;
    const stdio: StdioOptions = [
      spec.stdin === null && spec.keepStdinOpen !== true ? 'ignore' : 'pipe',
      'pipe',
      'pipe',
      ...(spec.fd3 ? ['pipe' as const] : []),
    ];
    let child: ChildProcess;
    try {
      child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, stdio, detached: true });
    } catch (error) {
      launched.pid = undefined;
      launched.destroyPipes = () => undefined;
      setImmediate(() => launched.emit('spawnError', error));
      return launched;
    }
    launched.pid = child.pid;
    launched.destroyPipes = () => child.stdio.forEach((stream) => stream?.destroy());
    [1, 2, 3].forEach((fd) => (child.stdio[fd] as Readable | undefined)?.on('data', (chunk: Buffer) => launched.emit('data', fd, chunk)));
    child.on('error', (error) => {
      if (child.pid === undefined) launched.emit('spawnError', error);
    });
    child.on('exit', (code, signal) => launched.emit('exit', code, signal));
    child.on('close', () => launched.emit('close'));
    const stdin = child.stdin;
    if (stdin) {
      // A harness that never reads stdin closes it early: that is not an error.
      stdin.on('error', () => undefined);
      if (spec.keepStdinOpen === true) {
        if (spec.stdin !== null) stdin.write(spec.stdin);
        launched.write = (data) => {
          if (stdin.writable) stdin.write(data);
        };
        launched.endStdin = () => stdin.end();
      } else stdin.end(spec.stdin);
    }
    return launched;
  },
};

class RelayedProcess extends EventEmitter implements LaunchedProcess {
  pid: number | undefined = undefined;

  constructor(
    readonly id: number,
    private readonly helper: SpawnHelper,
  ) {
    super();
  }

  destroyPipes(): void {
    this.helper.destroyPipes(this.id);
  }

  write(data: string): void {
    this.helper.writeStdin(this.id, data);
  }

  endStdin(): void {
    this.helper.endStdin(this.id);
  }

  receive(message: HelperMessage): void {
    if (message.ev === 'spawned') {
      this.pid = message.pid;
      this.emit('spawned', message.pid);
    } else if (message.ev === 'data') this.emit('data', message.fd, Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength));
    else if (message.ev === 'error') this.emit('spawnError', Object.assign(new Error(message.message), { code: message.code }));
    else if (message.ev === 'exit') this.emit('exit', message.code, message.signal);
    else this.emit('close');
  }

  /** The helper itself died: whatever ran is killed, and the command ends as killed. */
  helperDied(): void {
    if (this.pid === undefined) {
      this.emit('spawnError', Object.assign(new Error('the spawn helper process stopped'), { code: 'EHELPER' }));
      return;
    }
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    this.emit('exit', null, 'SIGKILL');
    this.emit('close');
  }
}

const GUARDIAN_SCRIPT = path.join(__dirname, 'process-guardian.js');

/**
 * Spawns through a spawn helper process (helper-transports.ts), started on first use and again
 * if it dies: the Python helper where python3 runs, else the Node one, unless told which.
 *
 * Each command's process group is also given to a process guardian (process-guardian.js), in a
 * session of its own, which kills the groups still running when this process dies: the helper
 * does so when only the server dies, but a signal to the server's whole process group (a
 * supervisor's, the out-of-memory killer's) takes the helper with it.
 */
export class SpawnHelper implements ProcessLauncher {
  private helper: HelperTransport | null = null;
  private readonly running = new Map<number, RelayedProcess>();
  private nextId = 1;
  private guardian: ChildProcess | null = null;
  private recordsFile: string | null = null;

  constructor(private kind?: SpawnHelperKind) {}

  /**
   * Where the guardian keeps its list of running groups, for an instance started after this one
   * and its guardian were killed (process-groups.ts). Takes effect with the next guardian started.
   */
  recordProcessGroupsIn(file: string): void {
    this.recordsFile = file;
  }

  /** The guardian's pid while it runs (for tests). */
  get guardianPid(): number | undefined {
    return this.guardian?.pid;
  }

  launch(spec: LaunchSpec): LaunchedProcess {
    const relayed = new RelayedProcess(this.nextId++, this);
    this.running.set(relayed.id, relayed);
    relayed.once('spawned', (pid: number) => this.guard(`+${pid}\n`));
    relayed.once('close', () => {
      this.running.delete(relayed.id);
      if (relayed.pid !== undefined) this.guard(`-${relayed.pid}\n`);
    });
    relayed.once('spawnError', () => this.running.delete(relayed.id));
    this.transport().send({ op: 'spawn', id: relayed.id, ...spec });
    return relayed;
  }

  destroyPipes(id: number): void {
    this.helper?.send({ op: 'destroy', id });
  }

  writeStdin(id: number, data: string): void {
    if (this.running.has(id)) this.helper?.send({ op: 'write', id, data });
  }

  endStdin(id: number): void {
    if (this.running.has(id)) this.helper?.send({ op: 'end', id });
  }

  /** The helper's pid while it runs (for operations and tests). */
  get helperPid(): number | undefined {
    return this.helper?.process.pid;
  }

  /** Which helper starts the commands (chosen at the first one). */
  get helperKind(): SpawnHelperKind {
    return (this.kind ??= defaultHelperKind());
  }

  private guard(line: string): void {
    (this.guardian ?? this.startGuardian())?.stdin?.write(line);
  }

  /** Starts the guardian, telling it of every group already running; null where it cannot start. */
  private startGuardian(): ChildProcess | null {
    const args = [GUARDIAN_SCRIPT, ...(this.recordsFile === null ? [] : [this.recordsFile])];
    let guardian: ChildProcess;
    try {
      guardian = spawn(process.execPath, args, { detached: true, stdio: ['pipe', 'ignore', 'inherit'], env: {} });
    } catch {
      return null;
    }
    guardian.on('error', () => undefined);
    guardian.stdin?.on('error', () => undefined);
    guardian.once('exit', () => {
      if (this.guardian === guardian) this.guardian = null;
    });
    guardian.unref();
    (guardian.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    this.guardian = guardian;
    const running = [...this.running.values()].flatMap((relayed) => (relayed.pid === undefined ? [] : [`+${relayed.pid}\n`]));
    if (running.length > 0) guardian.stdin?.write(running.join(''));
    return guardian;
  }

  private transport(): HelperTransport {
    if (this.helper) return this.helper;
    let heard = false;
    const helper = startHelper(this.helperKind, (message) => {
      heard = true;
      this.running.get(message.id)?.receive(message);
    });
    helper.process.on('exit', () => {
      if (this.helper === helper) this.helper = null;
      // A Python helper that died before it said a word cannot run here (a broken python3): the Node one takes over.
      if (!heard && this.kind === 'python') this.kind = 'node';
      const orphans = [...this.running.values()];
      this.running.clear();
      orphans.forEach((relayed) => relayed.helperDied());
    });
    this.helper = helper;
    return helper;
  }
}

/** The launcher trials use: one spawn helper per server process. */
export const sharedSpawnHelper = new SpawnHelper();
