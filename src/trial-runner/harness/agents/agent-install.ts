import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, open, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import type { AgentDriver } from './agent-driver';

/** An agent installed and verified: its folder (bound read-only into sandboxes) and what `--version` printed. */
export interface InstalledAgent {
  dir: string;
  version: string;
  reported: string;
}

/** The marker written last into an install: present means installed and verified. */
const MARKER = '.assay-agent.json';
const LOCK_POLL_MS = 250;
const VERIFY_TIMEOUT_MS = 60_000;
/** The lines of npm's error a voided trial shows. */
const ERROR_LINES = 6;

/**
 * Installs each agent's npm package at its version once per machine, into `<root>/<agent>@<version>`
 * (ASSAY_AGENTS_DIR), and verifies it (its program runs `--version`). Trials and server
 * instances that need the same install at once wait for one another: in this process on the same
 * promise, across processes on a lock file (a lock whose holder died is taken over). An install is
 * made in a staging folder and renamed into place after it is verified, so a half-made install is
 * never used. npm's cache is kept beside the installs.
 */
export class AgentInstaller {
  private readonly pending = new Map<string, Promise<InstalledAgent | { failure: string }>>();

  constructor(
    readonly root: string,
    private readonly timeoutMs: number,
  ) {}

  /** The install's folder, whether it is there yet or not. */
  folderOf(driver: AgentDriver, version: string): string {
    return path.join(this.root, `${driver.name}@${version}`);
  }

  ensure(driver: AgentDriver, version: string): Promise<InstalledAgent | { failure: string }> {
    const key = `${driver.name}@${version}`;
    const running = this.pending.get(key);
    if (running) return running;
    const started = this.installed(driver, version).then((done) => done ?? this.installUnderLock(driver, version));
    this.pending.set(key, started);
    // A failure is tried again by the next trial (the registry may be back); a success is read from its marker from now on.
    void started.finally(() => this.pending.delete(key));
    return started;
  }

  private async installed(driver: AgentDriver, version: string): Promise<InstalledAgent | null> {
    const dir = this.folderOf(driver, version);
    try {
      const marker = JSON.parse(await readFile(path.join(dir, MARKER), 'utf8')) as { reported?: string };
      return { dir, version, reported: marker.reported ?? version };
    } catch {
      return null;
    }
  }

  private async installUnderLock(driver: AgentDriver, version: string): Promise<InstalledAgent | { failure: string }> {
    mkdirSync(this.root, { recursive: true, mode: 0o755 });
    const lock = path.join(this.root, `${driver.name}@${version}.lock`);
    const deadline = Date.now() + this.timeoutMs + VERIFY_TIMEOUT_MS;
    for (;;) {
      const held = await takeLock(lock);
      if (held) {
        try {
          return (await this.installed(driver, version)) ?? (await this.install(driver, version));
        } finally {
          await unlink(lock).catch(() => undefined);
        }
      }
      // Another process installs it: wait for its marker, or for its lock to go (it failed, or died).
      const done = await this.installed(driver, version);
      if (done) return done;
      if (Date.now() > deadline) return { failure: `installing ${driver.packageName}@${version} did not finish: another process holds ${lock}` };
      await stealIfStale(lock, this.timeoutMs + VERIFY_TIMEOUT_MS);
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
    }
  }

  private async install(driver: AgentDriver, version: string): Promise<InstalledAgent | { failure: string }> {
    const spec = `${driver.packageName}@${version}`;
    const staging = path.join(this.root, `.staging-${driver.name}@${version}-${randomBytes(4).toString('hex')}`);
    mkdirSync(staging, { mode: 0o755 });
    try {
      const env = {
        ...npmEnv(),
        npm_config_cache: path.join(this.root, '.npm-cache'),
        npm_config_update_notifier: 'false',
        npm_config_fund: 'false',
        npm_config_audit: 'false',
      };
      const npm = await run('npm', ['install', '--prefix', staging, '--no-save', '--loglevel=error', spec], { env, timeoutMs: this.timeoutMs });
      if (npm.code !== 0) return { failure: `installing ${spec} failed (npm ${npm.timedOut ? 'timed out' : `exit ${npm.code}`}): ${lastLines(npm.output)}` };
      const bin = path.join(staging, 'node_modules', '.bin', driver.bin);
      if (!existsSync(bin)) return { failure: `installing ${spec} gave no program ${driver.bin}` };
      const home = await mkdtemp(path.join(tmpdir(), 'assay-agent-verify-'));
      let check: RunResult;
      try {
        check = await run(bin, ['--version'], { env: { ...npmEnv(), HOME: home }, timeoutMs: VERIFY_TIMEOUT_MS });
      } finally {
        await rm(home, { recursive: true, force: true });
      }
      if (check.code !== 0) return { failure: `${spec} was installed but "${driver.bin} --version" failed (exit ${check.code}): ${lastLines(check.output)}` };
      const reported = lastLines(check.output, 1);
      await writeFile(
        path.join(staging, MARKER),
        JSON.stringify({ agent: driver.name, package: driver.packageName, version, reported, at: new Date().toISOString() }),
      );
      const dir = this.folderOf(driver, version);
      await rename(staging, dir).catch(async (error: unknown) => {
        // Made meanwhile by a process that took a stale lock: that one is as good.
        if (!existsSync(path.join(dir, MARKER))) throw error;
      });
      return { dir, version, reported };
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
}

/** The lock file made exclusively, holding who made it; false when another holds it. */
async function takeLock(lock: string): Promise<boolean> {
  try {
    const handle = await open(lock, 'wx');
    await handle.writeFile(JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() }));
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Removes a lock whose holder on this host is gone, or that is older than an install can take. */
async function stealIfStale(lock: string, maxAgeMs: number): Promise<void> {
  try {
    const holder = JSON.parse(await readFile(lock, 'utf8')) as { pid?: number; host?: string };
    const age = Date.now() - (await stat(lock)).mtimeMs;
    const gone = holder.host === hostname() && typeof holder.pid === 'number' && !alive(holder.pid);
    if (gone || age > maxAgeMs) await unlink(lock);
  } catch {
    // Gone already, or being written: looked at again on the next poll.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * npm's environment: what finds programs, the user's npm configuration (~/.npmrc, npm_config_*),
 * the proxies and the certificate authorities a registry behind a proxy needs; nothing else of
 * the server's, whose environment holds provider keys that a package's install script could read.
 */
function npmEnv(): Record<string, string> {
  const kept: Record<string, string> = {};
  const names = ['PATH', 'HOME', 'LANG', 'TMPDIR', 'NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'];
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (names.includes(name) || /^npm_config_/i.test(name) || /^(https?|no)_proxy$/i.test(name)) kept[name] = value;
  }
  return kept;
}

interface RunResult {
  code: number | null;
  output: string;
  timedOut: boolean;
}

function run(file: string, args: string[], options: { env: Record<string, string>; timeoutMs: number }): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let kept = 0;
    const keep = (chunk: Buffer) => {
      // The end is what matters (npm's error); a bounded window of it is kept.
      chunks.push(chunk);
      kept += chunk.length;
      while (kept > 64 * 1024 && chunks.length > 1) kept -= chunks.shift()?.length ?? 0;
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: 127, output: error.message, timedOut: false });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: Buffer.concat(chunks).toString('utf8'), timedOut });
    });
  });
}

function lastLines(output: string, lines = ERROR_LINES): string {
  return output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .slice(-lines)
    .join(' | ');
}
