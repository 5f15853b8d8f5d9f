/**
 * FerretDB, a MongoDB wire-protocol server on SQLite, started for one test file: the MongoDB
 * adapters then run over the real driver and the real protocol on machines where no MongoDB can
 * be installed. `.ci/run` builds the binary into a cache outside the clone
 * (`$XDG_CACHE_HOME/assay-ci/ferretdb/<version>/ferretdb`, or ASSAY_FERRETDB_BIN); without it,
 * the FerretDB suites skip, saying why.
 *
 * FerretDB v1 is not MongoDB: what it lacks is listed in FERRETDB_LACKS, and the tests that need
 * it skip on FerretDB with that reason (they run where MONGODB_URL names a real server).
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { tempDir } from './temp-dirs';
import { freePort } from './ports';

export const FERRETDB_VERSION = 'v1.24.2';
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

/** What a MongoDB deployment does that a test may need; FerretDB v1 lacks each of them. */
export type MongoCapability =
  'renameWithDropTarget' | 'atomicConditionalUpdates' | 'transactionsAndSessions' | 'uniqueIndexErrors' | 'multikeyAndNullUniqueKeys';

/** Why each capability is missing on FerretDB v1 (checked against v1.24.2 over the driver). */
export const FERRETDB_LACKS: Readonly<Record<MongoCapability, string>> = {
  renameWithDropTarget: 'FerretDB v1 refuses renameCollection with dropTarget: true ("not implemented yet"), which the rebuild swap needs',
  atomicConditionalUpdates:
    'FerretDB v1 applies a conditional update as a read then a write, not atomically, so the projection lease, its fences and the checkpoint term cannot be tested there',
  transactionsAndSessions: 'FerretDB v1 has no transactions, sessions or change streams',
  uniqueIndexErrors:
    'FerretDB v1 answers a unique-index violation by an update, or a unique index built over duplicates, with InternalError (code 1) instead of E11000',
  multikeyAndNullUniqueKeys: 'FerretDB v1 does not key a unique index by array elements, nor treat a missing field as null in one',
};

export function ferretDbBinary(): string {
  const configured = process.env.ASSAY_FERRETDB_BIN;
  if (configured) return configured;
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  return path.join(cache, 'assay-ci', 'ferretdb', FERRETDB_VERSION, 'ferretdb');
}

/** Why FerretDB cannot run here, or null when its binary is there. */
export function ferretDbMissing(): string | null {
  const binary = ferretDbBinary();
  try {
    fs.accessSync(binary, fs.constants.X_OK);
    return null;
  } catch {
    return `no FerretDB binary at ${binary} (.ci/run builds it with Go; or set ASSAY_FERRETDB_BIN)`;
  }
}

export interface FerretDb {
  /** A connection string for a database of its own: mongodb://127.0.0.1:<port>/<database>. */
  url(database: string): string;
  /** Its SQLite files' directory (removed when the test file ends). */
  dir: string;
  stop(): Promise<void>;
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts FerretDB on a free 127.0.0.1 port with its SQLite files in a temporary directory of its own. */
export async function startFerretDb(): Promise<FerretDb> {
  const missing = ferretDbMissing();
  if (missing) throw new Error(missing);
  const dir = tempDir('assay-ferretdb-');
  const port = await freePort();
  const child = spawn(
    ferretDbBinary(),
    [
      '--handler=sqlite',
      `--sqlite-url=file:${dir}/`,
      `--state-dir=${dir}`,
      `--listen-addr=127.0.0.1:${port}`,
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=error',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await accepting(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`FerretDB did not start on port ${port}: ${output.trim() || `exit ${child.exitCode}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: (database) => `mongodb://127.0.0.1:${port}/${database}`,
    dir,
    stop: async () => {
      const gone = exited(child);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await gone;
      clearTimeout(timer);
    },
  };
}
