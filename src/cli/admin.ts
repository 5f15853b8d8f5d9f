/**
 * The operator's commands: they work on the server's data directory itself (the event log, the
 * master key), so they load the server's runtime. Loaded only when one of them runs, so that
 * `assay eval`, a client of the HTTP API, starts without the stores or Nest.
 */
import 'reflect-metadata';
import { isOrganizationId, loadConfig } from '../config';
import type { EventMetadata, EventStore } from '#infrastructure/event-store/event-store.port';
import { holdDataDirectoryAlone } from '#infrastructure/locks/data-directory-lock';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { rotateMasterKey } from '#infrastructure/secrets/master-key-rotation';
import { closeOnSignals, startServer } from '../main';
import { issueApiKey } from '#modules/auth/api-keys/api-key-issuer';
import { ensureOrganization, organizationExists } from '#modules/auth/organizations/organization';
import { rebuildAndSwap } from '#infrastructure/processing/projection-rebuild';
import { allProjections } from '../projections';
import { closeRuntime, openEventStore, openRuntime, snapshotSettings } from '../runtime';
import { isPermission, Permission } from '#shared/permissions';
import { Refusal, UsageError } from './errors';

export interface KeyFlags {
  org?: string;
  permissions?: string;
  name?: string;
  createOrg?: boolean;
}

export async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = new JsonLogger(config.logLevel);
  const server = await startServer(config, logger);
  closeOnSignals(server, logger);
}

export async function createKey(flags: KeyFlags): Promise<void> {
  const organization = flags.org;
  if (!organization || !isOrganizationId(organization)) {
    throw new UsageError('--org is required: lower-case letters, digits, "-" and "_".');
  }
  const permissions = (flags.permissions ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const unknown = permissions.filter((p) => !isPermission(p));
  if (permissions.length === 0 || unknown.length > 0) {
    throw new UsageError(`--permissions must list known permissions${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}.`);
  }
  const config = loadConfig();
  const eventStore = await openEventStore(config);
  try {
    const now = new Date();
    const metadata = { organization, actor: 'system:cli', correlationId: `cli-${now.getTime()}`, causationId: `cli-${now.getTime()}` };
    await requireOrganization(eventStore, organization, flags.createOrg === true, now, metadata);
    const issued = await issueApiKey(eventStore, {
      organization,
      name: flags.name ?? 'cli key',
      permissions: [...new Set(permissions)] as Permission[],
      now,
      metadata,
    });
    process.stdout.write(`Issued API key ${issued.id} for organization ${organization} (${issued.permissions.join(', ')}).\n`);
    process.stdout.write('It is shown only now; store it safely.\n');
    process.stdout.write(`${issued.key}\n`);
  } finally {
    await eventStore.close();
  }
}

/**
 * A misspelt --org must not found a new organization: only --create-org creates one
 * (ASSAY_INIT_ORG creates its own at server start).
 */
async function requireOrganization(eventStore: EventStore, organization: string, create: boolean, now: Date, metadata: EventMetadata): Promise<void> {
  if (create) {
    await ensureOrganization(eventStore, organization, now, metadata);
    return;
  }
  if (!(await organizationExists(eventStore, organization))) {
    throw new Refusal(`Organization "${organization}" does not exist; no key was issued. Check the name, or pass --create-org to create it.`);
  }
}

/**
 * Run with the servers stopped: a running server keeps the old master key until it restarts.
 * The data directory's lock proves it (servers hold it shared, this command exclusive), and
 * keeps a server from starting half-way through.
 */
export async function rotateMaster(force: boolean): Promise<void> {
  const config = loadConfig();
  const lock = holdDataDirectoryAlone(config.dataDir, force, 'assay keys rotate-master');
  const eventStore = await openEventStore(config).catch((error: unknown) => {
    lock?.release();
    throw error;
  });
  try {
    const report = await rotateMasterKey(config, process.env, eventStore);
    process.stdout.write(
      `Re-wrapped ${report.rewrapped} data keys (${report.alreadyDone} already done) of ${report.organizations} organizations: ${report.from} -> ${report.to}.\n`,
    );
    process.stdout.write(`Kept ${report.chainKeysKept} audit chain keys under the new master key, so earlier audit links still verify.\n`);
    process.stdout.write(
      report.keySource === 'file'
        ? 'The key file now holds the new master key.\n'
        : 'Set ASSAY_MASTER_KEY to the value of ASSAY_NEW_MASTER_KEY, then start the servers.\n',
    );
  } finally {
    await eventStore.close();
    lock?.release();
  }
}

export async function rebuildProjections(): Promise<void> {
  const config = loadConfig();
  const logger = new JsonLogger(config.logLevel);
  const runtime = await openRuntime(config, logger);
  if (runtime.election) {
    // A shared MongoDB: new collections swapped in under the projection lease, while servers serve.
    try {
      const report = await rebuildAndSwap(runtime.eventStore, runtime.readStore, allProjections, { leaseMs: config.projectionLeaseMs }, logger);
      for (const { collection, documents } of report.collections) logger.info('rebuilt collection', { collection, documents });
    } finally {
      await closeRuntime(runtime);
    }
    return;
  }
  try {
    await runtime.readStore.dropAll();
    logger.info('read models dropped; replaying the event log', { head: await runtime.eventStore.headPosition() });
    await runtime.projections.start();
    for (const name of await runtime.readStore.collectionNames()) {
      const documents = await runtime.readStore.collection(name).count({});
      logger.info('rebuilt collection', { collection: name, documents });
    }
  } finally {
    // On the embedded store, closing writes the rebuilt read models as the data directory's snapshot.
    await closeRuntime(runtime);
  }
  if (runtime.snapshots && config.snapshotEvery > 0) {
    logger.info('rebuilt read models written as the snapshot; running servers keep theirs and load this one at their next start', {
      file: snapshotSettings(config).file,
    });
  }
}
