import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AssayConfig } from './config';
import { BlobBackedEventStore } from '#infrastructure/blob-store/blob-backed-event-store';
import type { BlobStore } from '#infrastructure/blob-store/blob-store.port';
import { BLOBS_DIRECTORY, FileBlobStore } from '#infrastructure/blob-store/file/file-blob-store';
import { MongoBlobStore } from '#infrastructure/blob-store/mongodb/mongodb-blob-store';
import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { EventStoreDbEventStore } from '#infrastructure/event-store/eventstoredb/eventstoredb-event-store';
import { DEFAULT_RESUME_POLICY } from '#infrastructure/event-store/eventstoredb/resuming-subscription';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { deriveChainKey } from '#infrastructure/secrets/chain-key';
import { masterKeyForEventLog } from '#infrastructure/secrets/master-key';
import type { JsonLogger } from '#infrastructure/logging/json-logger';
import { createHash } from 'node:crypto';
import type { Projection } from '#infrastructure/processing/projection';
import { ProjectionElection } from '#infrastructure/processing/projection-election';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { ReadModelSnapshots } from '#infrastructure/processing/read-model-snapshots';
import { SNAPSHOT_FILE } from '#infrastructure/read-store/memory/read-model-snapshot';
import { PositionTrackingEventStore, WriteTracker } from '#infrastructure/processing/read-your-writes';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { MongoReadStore } from '#infrastructure/read-store/mongodb/mongodb-read-store';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { allProjections } from './projections';

/** The stores and the projection runner: what the HTTP app, the CLI and the benchmarks share. */
export interface Runtime {
  config: AssayConfig;
  logger: JsonLogger;
  eventStore: EventStore;
  readStore: ReadStore;
  projections: ProjectionRunner;
  /** The positions appended by requests in flight, for read-your-writes. */
  writes: WriteTracker;
  /** The embedded read store's snapshots (null on MongoDB, whose documents persist). */
  snapshots: ReadModelSnapshots | null;
  /** On a shared MongoDB read store: which instance projects (null on the embedded store, where each does). */
  election: ProjectionElection | null;
}

export const EVENT_LOG_FILE = 'events.sqlite';

/**
 * The event log, its large values kept in the blob store beside it (blob-backed-event-store.ts):
 * every reader and writer of the service goes through this, so none sees a blob reference.
 */
export async function openEventStore(config: AssayConfig, logger?: JsonLogger): Promise<EventStore> {
  const log = await openEventLog(config, logger);
  const blobs = await openBlobStore(config).catch(async (error: unknown) => {
    await log.close();
    throw error;
  });
  return new BlobBackedEventStore(log, blobs);
}

/**
 * The blobs live with the log: in the data directory beside the SQLite file (one backup unit), or,
 * with EventStoreDB, in MongoDB when it is configured (so instances on several hosts share them).
 */
export function blobStoreKind(config: AssayConfig): 'mongodb' | 'file' {
  return config.eventStoreUrl && config.mongodbUrl ? 'mongodb' : 'file';
}

export async function openBlobStore(config: AssayConfig): Promise<BlobStore> {
  if (blobStoreKind(config) === 'mongodb') return MongoBlobStore.connect(config.mongodbUrl as string);
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  return FileBlobStore.inDataDirectory(config.dataDir);
}

async function openEventLog(config: AssayConfig, logger?: JsonLogger): Promise<EventStore> {
  // The organizations' audit chains are keyed by the master key's chain key (chain-key.ts).
  const chainKey = deriveChainKey(masterKeyForEventLog(config));
  if (config.eventStoreUrl) {
    return EventStoreDbEventStore.connect(config.eventStoreUrl, {
      chainKey,
      maxAppendBytes: config.eventStoreMaxAppendBytes,
      chainLeaseMs: config.eventStoreChainLeaseMs,
      resume: { ...DEFAULT_RESUME_POLICY, onDrop: (reason, after) => logger?.warn('event store subscription dropped', { reason, resumeAfter: after ?? null }) },
    });
  }
  // The data directory holds the event log, artifacts and the generated master key: owner only.
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  return new SqliteEventStore(path.join(config.dataDir, EVENT_LOG_FILE), { chainKey });
}

export async function openReadStore(config: AssayConfig): Promise<ReadStore> {
  if (config.mongodbUrl) return MongoReadStore.connect(config.mongodbUrl);
  return new MemoryReadStore();
}

/** Opens both stores as the configuration says and logs which engines are in use. */
export async function openRuntime(config: AssayConfig, logger: JsonLogger): Promise<Runtime> {
  const writes = new WriteTracker();
  const eventStore = new PositionTrackingEventStore(await openEventStore(config, logger), writes);
  const readStore = await openReadStore(config);
  logger.info('stores opened', {
    eventStore: config.eventStoreUrl ? 'eventstoredb' : `sqlite:${path.join(config.dataDir, EVENT_LOG_FILE)}`,
    readStore: config.mongodbUrl ? 'mongodb' : 'memory',
    blobStore: blobStoreKind(config) === 'mongodb' ? 'mongodb' : `file:${path.join(config.dataDir, BLOBS_DIRECTORY)}`,
  });
  const { projections, election } = projectionsFor(config, eventStore, readStore, logger);
  const snapshots =
    readStore instanceof MemoryReadStore && !config.eventStoreUrl ? new ReadModelSnapshots(snapshotSettings(config), readStore, projections, logger) : null;
  return { config, logger, eventStore, readStore, projections, writes, snapshots, election };
}

/**
 * A shared MongoDB read store is projected by one elected instance; the embedded store by every
 * instance into its own memory, exactly as a lone server does.
 */
function projectionsFor(config: AssayConfig, eventStore: EventStore, readStore: ReadStore, logger: JsonLogger) {
  if (!config.mongodbUrl) return { projections: new ProjectionRunner(eventStore, readStore, allProjections, logger), election: null };
  const settings = { instanceId: config.execution.claims.instanceId, leaseMs: config.projectionLeaseMs };
  const { runner, election } = ProjectionElection.create(eventStore, readStore, allProjections, settings, logger);
  return { projections: runner, election };
}

/** Where the embedded store's snapshot lives, how often it is written, and what builds it. */
export function snapshotSettings(config: AssayConfig) {
  return { file: path.join(config.dataDir, SNAPSHOT_FILE), every: config.snapshotEvery, fingerprint: projectionsFingerprint(allProjections) };
}

/**
 * What a snapshot's documents depend on besides the log: the release and its projections (names,
 * event types, collections and indexes). A snapshot of another release is replayed over in full.
 */
export function projectionsFingerprint(projections: readonly Projection[]): string {
  const described = projections.map(({ name, eventTypes, collections }) => ({ name, eventTypes, collections }));
  return createHash('sha256')
    .update(JSON.stringify({ release: releaseVersion(), projections: described }))
    .digest('hex');
}

function releaseVersion(): string {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version?: unknown };
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Loads the newest read-model snapshot (embedded store), then replays the log's tail; on MongoDB, joins the election. */
export async function startProjections(runtime: Runtime): Promise<void> {
  if (runtime.election) {
    await runtime.election.start();
    return;
  }
  await runtime.snapshots?.load(runtime.eventStore);
  await runtime.projections.start();
  runtime.snapshots?.afterCatchUp();
}

export async function closeRuntime(runtime: Runtime): Promise<void> {
  if (runtime.election) await runtime.election.stop();
  else await runtime.projections.stop();
  await runtime.snapshots?.stop();
  await runtime.eventStore.close();
  await runtime.readStore.close();
}
