import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLI } from './servers';

export interface EvalResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunningEval {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  finished: Promise<EvalResult>;
}

/**
 * `assay eval` as a user runs it: the compiled CLI as a child process in a directory of suite
 * files, each in a process group of its own (so a test can stop it with the trials it runs);
 * those still running after a test are killed.
 */
export function evalCli(options: { dir: () => string; env: () => Record<string, string> }) {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
  const start = (args: string[], extra: Record<string, string> = {}): RunningEval => {
    const child = spawn(process.execPath, [CLI, 'eval', ...args], {
      cwd: options.dir(),
      env: { PATH: process.env.PATH ?? '', ...options.env(), ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const finished = new Promise<EvalResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    return { child, stdout: () => stdout, stderr: () => stderr, finished };
  };
  return {
    start,
    run: (args: string[], extra: Record<string, string> = {}) => start(args, extra).finished,
    write: (name: string, content: string): string => {
      const file = path.join(options.dir(), name);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content);
      return file;
    },
  };
}

/** The batch ids an `assay eval` printed, in order, once each. */
export const batchIdsIn = (output: string): string[] => [...new Set([...output.matchAll(/batch (bat_[a-z0-9]+)/g)].map((match) => match[1]))];
