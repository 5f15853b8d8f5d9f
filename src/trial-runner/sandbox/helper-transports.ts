import { ChildProcess, fork, spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { findHostTool } from './host-tools';
import { encodeFrame, FrameReader } from './spawn-frames';

export interface LaunchSpec {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, then closed; null gives the command /dev/null. */
  stdin: string | null;
  /** Open a fourth pipe (fd 3) for the launcher's own status report (bubblewrap). */
  fd3: boolean;
  /** Keep stdin open after `stdin` is written, for `write` and `endStdin` (a sandbox session's commands). */
  keepStdinOpen?: boolean;
}

/** What the server asks of a spawn helper. */
export type HelperRequest = ({ op: 'spawn'; id: number } & LaunchSpec) | { op: 'destroy' | 'end'; id: number } | { op: 'write'; id: number; data: string };

/** What a spawn helper tells the server about a command it started. */
export type HelperMessage =
  | { id: number; ev: 'spawned'; pid: number }
  | { id: number; ev: 'error'; code?: string; message: string }
  | { id: number; ev: 'data'; fd: number; chunk: Uint8Array }
  | { id: number; ev: 'exit'; code: number | null; signal: NodeJS.Signals | null }
  | { id: number; ev: 'close' };

/**
 * `python`: spawn_helper.py, which starts commands with vfork (cheap whatever the helper's
 * size). `node`: spawn-helper.js, which forks itself for each command. Both relay the same events.
 */
export type SpawnHelperKind = 'python' | 'node';

/** A running helper process and the way to send it requests. */
export interface HelperTransport {
  readonly process: ChildProcess;
  send(request: HelperRequest): void;
}

const NODE_HELPER_SCRIPT = path.join(__dirname, 'spawn-helper.js');
/** Beside this file in the sources and in the build (the build copies it: scripts/copy-assets.mjs). */
const PYTHON_HELPER_SCRIPT = path.join(__dirname, 'spawn_helper.py');

/**
 * Starts a helper of that kind. Neither its pipes nor its channel keep the server alive; when the
 * server goes, the helper kills what it started and exits.
 */
export function startHelper(kind: SpawnHelperKind, onMessage: (message: HelperMessage) => void): HelperTransport {
  return kind === 'python' ? startPythonHelper(onMessage) : startNodeHelper(onMessage);
}

function startNodeHelper(onMessage: (message: HelperMessage) => void): HelperTransport {
  const helper = fork(NODE_HELPER_SCRIPT, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] });
  helper.on('message', onMessage);
  // A send to a helper that just died fails here; its 'exit' ends every command it ran.
  helper.on('error', () => undefined);
  helper.unref();
  helper.channel?.unref();
  return { process: helper, send: (request) => helper.send(request) };
}

function startPythonHelper(onMessage: (message: HelperMessage) => void): HelperTransport {
  const python = findHostTool('python3') ?? 'python3';
  const helper = spawn(python, ['-I', '-S', PYTHON_HELPER_SCRIPT], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  const reader = new FrameReader();
  helper.stdout.on('data', (chunk: Buffer) => {
    for (const { header, payload } of reader.push(chunk)) {
      onMessage((header.ev === 'data' ? { ...header, chunk: payload } : header) as HelperMessage);
    }
  });
  helper.on('error', () => undefined);
  helper.stdin.on('error', () => undefined);
  helper.unref();
  for (const stream of [helper.stdin, helper.stdout]) (stream as unknown as { unref?: () => void }).unref?.();
  return { process: helper, send: (request) => helper.stdin.write(pythonFrame(request)) };
}

function pythonFrame(request: HelperRequest): Buffer {
  if (request.op === 'write') return encodeFrame({ op: request.op, id: request.id }, Buffer.from(request.data, 'utf8'));
  if (request.op !== 'spawn') return encodeFrame({ op: request.op, id: request.id });
  const { file, args, cwd, env, stdin, fd3, keepStdinOpen } = request;
  const header = {
    op: 'spawn',
    id: request.id,
    file: wellFormed(file),
    args: args.map(wellFormed),
    cwd: wellFormed(cwd),
    env: Object.fromEntries(Object.entries(env).map(([name, value]) => [wellFormed(name), wellFormed(value)])),
    stdin: stdin !== null,
    fd3,
    keepStdinOpen: keepStdinOpen === true,
  };
  return encodeFrame(header, Buffer.from(stdin ?? '', 'utf8'));
}

/**
 * The text as Node would pass it to a program: a lone surrogate (valid in a JSON string, and so
 * in a case's variables) becomes U+FFFD, as Node's UTF-8 conversion makes it; Python would refuse
 * to encode it, and the command would not start.
 */
function wellFormed(text: string): string {
  return text.replace(/\p{Surrogate}/gu, '\uFFFD');
}

let usablePython: boolean | null = null;

/**
 * The Python helper where python3 (3.5 or later) is on the server's PATH and runs, else the Node
 * helper. Probed once: at start-up (the log's `spawnHelper`), or at the first command.
 */
export function defaultHelperKind(): SpawnHelperKind {
  if (usablePython === null) {
    const python = findHostTool('python3');
    usablePython =
      python !== null &&
      spawnSync(python, ['-I', '-S', '-c', 'import sys, selectors, subprocess, json, struct, signal; sys.exit(sys.version_info < (3, 5))'], {
        stdio: 'ignore',
        timeout: 10_000,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      }).status === 0;
  }
  return usablePython ? 'python' : 'node';
}
