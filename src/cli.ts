#!/usr/bin/env node
import 'reflect-metadata';
import { ConfigError, isOrganizationId, loadConfig } from './config';
import type { EventMetadata, EventStore } from '#infrastructure/event-store/event-store.port';
import { holdDataDirectoryAlone } from '#infrastructure/locks/data-directory-lock';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { rotateMasterKey } from '#infrastructure/secrets/master-key-rotation';
import { closeOnSignals, startServer } from './main';
import { issueApiKey } from '#modules/auth/api-keys/api-key-issuer';
import { ensureOrganization, organizationExists } from '#modules/auth/organizations/organization';
import { closeRuntime, openEventStore, openRuntime } from './runtime';
import { isPermission, Permission, PERMISSIONS } from '#shared/permissions';

const USAGE = `Usage: assay <command>

  serve                                   serve the API (HOST, PORT, ASSAY_DATA_DIR, ...)
  keys create --org ORG --permissions P1,P2 [--name NAME] [--create-org]
                                          issue an API key; the key is the last line printed.
                                          ORG must exist, unless --create-org creates it
  keys rotate-master [--force]            re-wrap every data key under a new master key
                                          (ASSAY_NEW_MASTER_KEY, or a new key file); values stay as they are;
                                          refused while a server uses the data directory, unless --force
  projections rebuild                     drop the read models and replay the event log

Permissions: ${PERMISSIONS.join(', ')}`;

class UsageError extends Error {}

/** A well-formed command that the state of the event log refuses; nothing was written. */
class Refusal extends Error {}

type Flags = Partial<Record<string, string>>;

/** Flags that take no value: present or absent. */
const SWITCHES = new Set(['create-org']);

function parseFlags(args: string[]): Flags {
  const flags: Flags = {};
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index];
    if (!arg.startsWith('--')) throw new UsageError(`Unexpected argument "${arg}".`);
    const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
    if (SWITCHES.has(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value.`);
      flags[name] = 'true';
      continue;
    }
    const value = inline ?? args.at(++index);
    if (value === undefined) throw new UsageError(`--${name} needs a value.`);
    flags[name] = value;
  }
  return flags;
}

async function serve(): Promise<void> {
  const config = loadConfig();
  const logger = new JsonLogger(config.logLevel);
  const server = await startServer(config, logger);
  closeOnSignals(server, logger);
}

async function createKey(flags: Flags): Promise<void> {
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
    await requireOrganization(eventStore, organization, flags['create-org'] === 'true', now, metadata);
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
async function rotateMaster(args: string[]): Promise<void> {
  const unknown = args.filter((arg) => arg !== '--force');
  if (unknown.length > 0) throw new UsageError(`Unexpected argument "${unknown[0]}".`);
  const config = loadConfig();
  const lock = holdDataDirectoryAlone(config.dataDir, args.includes('--force'), 'assay keys rotate-master');
  const eventStore = await openEventStore(config).catch((error: unknown) => {
    lock?.release();
    throw error;
  });
  try {
    const report = await rotateMasterKey(config, process.env, eventStore);
    process.stdout.write(
      `Re-wrapped ${report.rewrapped} data keys (${report.alreadyDone} already done) of ${report.organizations} organizations: ${report.from} -> ${report.to}.\n`,
    );
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

async function rebuildProjections(): Promise<void> {
  const config = loadConfig();
  const logger = new JsonLogger(config.logLevel);
  const runtime = await openRuntime(config, logger);
  try {
    await runtime.readStore.dropAll();
    logger.info('read models dropped; replaying the event log', { head: await runtime.eventStore.headPosition() });
    await runtime.projections.start();
    for (const name of await runtime.readStore.collectionNames()) {
      const documents = await runtime.readStore.collection(name).count({});
      logger.info('rebuilt collection', { collection: name, documents });
    }
    if (!config.mongodbUrl) {
      logger.info('the embedded read store lives in memory: a running server rebuilds it at every start');
    }
  } finally {
    await closeRuntime(runtime);
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, subcommand, ...rest] = argv as [string | undefined, string | undefined, ...string[]];
  if (command === 'serve') return serve();
  if (command === 'keys' && subcommand === 'create') return createKey(parseFlags(rest));
  if (command === 'keys' && subcommand === 'rotate-master') return rotateMaster(rest);
  if (command === 'projections' && subcommand === 'rebuild') return rebuildProjections();
  if (command === undefined || command === 'help' || command === '--help') {
    process.stdout.write(USAGE + '\n');
    return;
  }
  throw new UsageError(`Unknown command "${[command, subcommand].filter(Boolean).join(' ')}".`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) process.stderr.write(`${error.message}\n\n${USAGE}\n`);
  else if (error instanceof Refusal) process.stderr.write(`${error.message}\n`);
  else if (error instanceof ConfigError) process.stderr.write(`Configuration error: ${error.message}\n`);
  else process.stderr.write(`assay failed: ${(error as Partial<Error>).message ?? String(error)}\n`);
  process.exit(error instanceof UsageError ? 64 : 1);
});
