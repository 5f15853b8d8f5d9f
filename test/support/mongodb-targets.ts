/**
 * The MongoDB deployments a test file runs its MongoDB suites against: the server MONGODB_URL
 * names (a real MongoDB), and FerretDB started for the file (test/support/ferretdb.ts) when its
 * binary is there. Each says what it lacks, so that a test needing it skips there with the
 * reason printed, and still runs on the other.
 */
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { MongoReadStore } from '#infrastructure/read-store/mongodb/mongodb-read-store';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { FERRETDB_LACKS, FERRETDB_VERSION, FerretDb, MongoCapability, ferretDbMissing, startFerretDb } from './ferretdb';

export type Lacks = Partial<Record<MongoCapability, string>>;

export interface MongoTarget {
  name: string;
  lacks: Lacks;
  /** A connection string naming `database`; call it in a hook or a test, once the file's FerretDB started. */
  url(database: string): string;
}

/** The connection string with another database in its path, its options kept. */
export function withDatabase(connection: string, database: string): string {
  return connection.replace(/^(mongodb(?:\+srv)?:\/\/[^/?]*)(\/[^?]*)?/, `$1/${database}`);
}

/** A database name of the file's own (under MongoDB's 63 bytes), so that dropping it touches nobody else's data. */
export function ownDatabase(label: string): string {
  return `assay_${label}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`.slice(0, 60);
}

/**
 * The targets of this file, starting FerretDB before its tests and stopping it after them. Call it
 * at the top of a spec file. A suite that `needs` what FerretDB lacks leaves it out, saying why.
 */
export function mongoTargets(what: string, needs: MongoCapability[] = []): MongoTarget[] {
  const targets: MongoTarget[] = [];
  const url = process.env.MONGODB_URL;
  if (url) targets.push({ name: 'mongodb', lacks: {}, url: (database) => withDatabase(url, database) });
  else process.stderr.write(`${what} on MongoDB skipped: MONGODB_URL is not set (see docs/guide/production-stores.md).\n`);

  const lacking = needs.map((capability) => FERRETDB_LACKS[capability]).at(0);
  if (lacking) {
    process.stderr.write(`${what} on FerretDB skipped: ${lacking}.\n`);
    return targets;
  }
  const missing = ferretDbMissing();
  if (missing) {
    process.stderr.write(`${what} on FerretDB skipped: ${missing}.\n`);
    return targets;
  }
  let ferret: FerretDb | null = null;
  beforeAll(async () => {
    ferret = await startFerretDb();
  }, 30_000);
  afterAll(async () => {
    await ferret?.stop();
  });
  targets.push({
    name: `FerretDB ${FERRETDB_VERSION}`,
    lacks: FERRETDB_LACKS,
    url: (database) => {
      if (!ferret) throw new Error('FerretDB has not started: call url() in a hook or a test.');
      return ferret.url(database);
    },
  });
  return targets;
}

/** A placeholder test where a suite has no target, so that the file reports a skip rather than no tests. */
export function noTarget(what: string): void {
  describe(what, () => {
    it.skip('needs MONGODB_URL or the FerretDB binary', () => undefined);
  });
}

type TestFn = () => Promise<unknown>;
const told = new Set<string>();

/**
 * `it`, or `it.skip` when the target lacks one of the capabilities, with the reason printed:
 * the test still runs where the target has them.
 */
export function itNeeding(lacks: Lacks | undefined, ...capabilities: MongoCapability[]): (title: string, fn: TestFn, timeout?: number) => void {
  const reason = capabilities.map((capability) => lacks?.[capability]).find((found) => found !== undefined);
  if (reason === undefined) return (title, fn, timeout) => it(title, fn, timeout);
  return (title) => {
    // Each reason once per file; every skipped test names it in its title.
    if (!told.has(reason)) process.stderr.write(`skipped "${title}" and others: ${reason}.\n`);
    told.add(reason);
    it.skip(`${title} (skipped: ${reason})`, () => undefined);
  };
}

/** A read store a suite opened, and how to end it (a MongoDB one drops its database). */
export interface OpenReadStore {
  store: ReadStore;
  close(): Promise<void>;
}

/**
 * The read stores a suite runs on: memory, and each MongoDB target (mongoTargets), there in a
 * database of its own (named after `label`) that `close` drops. Call it at the top of a spec file.
 */
export function readStoreTargets(what: string, label: string): Array<{ name: string; open: () => Promise<OpenReadStore> }> {
  const memory = async (): Promise<OpenReadStore> => {
    const store = new MemoryReadStore();
    return { store, close: () => store.close() };
  };
  const mongo = (target: MongoTarget) => async (): Promise<OpenReadStore> => {
    const database = ownDatabase(label);
    const store = await MongoReadStore.connect(target.url(database), database);
    return {
      store,
      close: async () => {
        await store.dropAll();
        await store.close();
      },
    };
  };
  return [{ name: 'memory', open: memory }, ...mongoTargets(what).map((target) => ({ name: target.name, open: mongo(target) }))];
}
