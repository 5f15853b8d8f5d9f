import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { RunningServer, startServer } from '../../src/main';
import { issueApiKey } from '#modules/auth/api-keys/api-key-issuer';
import { ensureOrganization } from '#modules/auth/organizations/organization';
import type { Permission } from '#shared/permissions';
import { ApiClient } from './http-client';
import { tempDir } from './temp-dirs';
import { freePort } from './ports';

export { freePort };

export const ROOT = path.resolve(__dirname, '../..');
export const CLI = path.join(ROOT, 'dist', 'cli.js');
/** The ASSAY_CONFIG of test servers that give none: see the file for what it allows. */
export const TEST_CONSENT_CONFIG = path.join(__dirname, 'test-consent.yaml');

export { tempDir } from './temp-dirs';

/** Captured log lines of an in-process server. */
export class LogCapture {
  readonly lines: string[] = [];
  readonly logger = new JsonLogger('debug', (line) => this.lines.push(line));

  entries(): Array<Record<string, unknown>> {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

export interface InProcessServer extends RunningServer {
  client: ApiClient;
  logs: LogCapture;
  dataDir: string;
}

/** The whole service in the test's process, on a real port, over real stores. */
export async function startInProcess(env: Partial<Record<string, string>> = {}): Promise<InProcessServer> {
  const dataDir = env.ASSAY_DATA_DIR ?? tempDir();
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', ASSAY_DATA_DIR: dataDir, ASSAY_CONFIG: TEST_CONSENT_CONFIG, ...env });
  const logs = new LogCapture();
  const server = await startServer(config, logs.logger);
  return { ...server, client: new ApiClient(server.url, env.ASSAY_INIT_API_KEY ?? null), logs, dataDir };
}

export interface ChildServer {
  child: ChildProcess;
  url: string;
  client: ApiClient;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * The compiled service as a child process (`node dist/cli.js serve`), as an operator runs it.
 * `ownGroup`: in a process group of its own, which `stop` signals whole (as a supervisor or the
 * out-of-memory killer ends a service with every helper it started).
 */
export async function startChild(env: Partial<Record<string, string>>, options: { ownGroup?: boolean } = {}): Promise<ChildServer> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does).`);
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve'], {
    // A temporary directory of the test file's own: a server the test kills keeps its trial root
    // there (the next server on it would clean it), and the file's end removes it either way.
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), ASSAY_CONFIG: TEST_CONSENT_CONFIG, TMPDIR: tempDir('assay-tmp-'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownGroup === true,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => {
    if (child.exitCode !== null) throw new Error(`The server exited at start:\n${output}`);
    return await fetch(url + '/health')
      .then((r) => r.ok)
      .catch(() => false);
  }, 30000);
  return {
    child,
    url,
    client: new ApiClient(url, env.ASSAY_INIT_API_KEY ?? null),
    output: () => output,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) {
        if (options.ownGroup === true && child.pid !== undefined) process.kill(-child.pid, signal);
        else child.kill(signal);
      }
      return exited;
    },
  };
}

export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms.`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export const INIT_KEY = 'assay_test_init_key_0123456789abcdef';

/** Child servers started by a file's tests: each killed (SIGKILL) after the test that started it. */
export function childServersPerTest(): (env: Record<string, string>) => Promise<ChildServer> {
  let children: ChildServer[] = [];
  afterEach(async () => {
    await Promise.all(children.map((child) => child.stop('SIGKILL')));
    children = [];
  });
  return async (env) => {
    const child = await startChild(env);
    children.push(child);
    return child;
  };
}

/**
 * One in-process server for the enclosing describe block, organization `acme` with the initial
 * key: started before its tests, closed after them. Read `server` and `api` inside the tests.
 */
export function acmeServerPerSuite(env: Record<string, string> = {}): { readonly server: InProcessServer; readonly api: ApiClient } {
  let started: InProcessServer | null = null;
  beforeAll(async () => {
    started = await startInProcess({ ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY, ...env });
  });
  afterAll(() => started?.close());
  const server = (): InProcessServer => {
    if (!started) throw new Error('The suite server is read before its beforeAll ran.');
    return started;
  };
  return {
    get server() {
      return server();
    },
    get api() {
      return server().client;
    },
  };
}

/**
 * A client holding a new API key of `organization` with these permissions, issued straight into
 * the server's event log (as the CLI does), and usable at once.
 */
export async function keyFor(server: InProcessServer, organization: string, permissions: Permission[], name = 'test key'): Promise<ApiClient> {
  const now = new Date();
  const metadata = { organization, actor: 'system:test', correlationId: 'test', causationId: 'test' };
  await ensureOrganization(server.runtime.eventStore, organization, now, metadata);
  const issued = await issueApiKey(server.runtime.eventStore, { organization, name, permissions, now, metadata });
  if (issued.position !== null) await server.runtime.projections.waitFor(issued.position, 10000);
  return server.client.withKey(issued.key);
}

/** Every file below a directory (none when it does not exist). */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : entry.isFile() ? [full] : [];
  });
}
