import * as net from 'node:net';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { Refusal, eventStoreDbRefusal, mongodbRefusal } from './connection-strings';

/**
 * The service's configuration, read from the environment once at start and validated there:
 * a bad value stops the start with a message that names the variable and says what to change.
 */
export interface AssayConfig {
  host: string;
  port: number;
  dataDir: string;
  eventStoreUrl: string | null;
  /** ASSAY_EVENTSTORE_MAX_APPEND_BYTES: the EventStoreDB server's MaxAppendSize (1 MiB by default). */
  eventStoreMaxAppendBytes: number;
  /**
   * ASSAY_EVENTSTORE_CHAIN_LEASE_MS: on EventStoreDB, how long a claim on an organization's hash
   * chain waits for its events before the next writer voids it (a writer sends them within a third).
   * At most a quarter of the trial lease.
   */
  eventStoreChainLeaseMs: number;
  mongodbUrl: string | null;
  initOrg: string | null;
  initApiKey: string | null;
  masterKey: Buffer | null;
  oauth: OAuthConfig | null;
  maxBodyBytes: number;
  /** How long a command waits for its own writes to reach the read models before answering. */
  readYourWritesTimeoutMs: number;
  logLevel: LogLevel;
  execution: ExecutionSettings;
  /** ASSAY_WATCH_STREAMS_PER_ORG: evals.batches.watch streams one organization may hold open at once. */
  watchStreamsPerOrganization: number;
  metrics: MetricsSettings;
  /** ASSAY_SNAPSHOT_EVERY: events between two read-model snapshots of the embedded store; 0 turns them off. */
  snapshotEvery: number;
  /** ASSAY_PROJECTION_LEASE_MS: how long the projecting instance's lease holds on a shared MongoDB unless renewed. */
  projectionLeaseMs: number;
}

/** GET /metrics: off unless ASSAY_METRICS=1, and answered only to the peers ASSAY_METRICS_ALLOW lists. */
export interface MetricsSettings {
  enabled: boolean;
  /** CIDR ranges (IPv4 or IPv6) whose peers may read the metrics; loopback only by default. */
  allow: string[];
}

/** How this process runs trials. */
export interface ExecutionSettings {
  /** The operator's harness and sandbox definitions (ASSAY_CONFIG, YAML or JSON), or null. */
  configPath: string | null;
  /** ASSAY_AGENTS_DIR: where built-in agents are installed once per version; null: `<data dir>/agents`. */
  agentsDir: string | null;
  maxParallelTrials: number;
  outputCapBytes: number;
  verifyTimeoutMs: number;
  /** How long a case's validator or prepare may run (ASSAY_VALIDATOR_TIMEOUT_MS). */
  validatorTimeoutMs: number;
  /** The local runners' leases and heartbeats (runner.* operations). */
  runner: RunnerTimings;
  /** Who this instance is when it claims a trial, and how long a claim holds unless renewed. */
  claims: TrialClaimSettings;
}

/** Trial claims of server instances sharing one event log (decision record 0041). */
export interface TrialClaimSettings {
  /** ASSAY_INSTANCE_ID: unique among the live instances; default host, pid and start time. */
  instanceId: string;
  /** ASSAY_TRIAL_LEASE_MS: a claim expires this long after its last renewal (renewed every third of it). */
  leaseMs: number;
}

/** How long a runner's lease on a trial lasts, and how long a silent runner keeps its batch. */
export interface RunnerTimings {
  /** ASSAY_RUNNER_LEASE_MS: a lease's length from its start or from the runner's last beat. */
  leaseMs: number;
  /** ASSAY_RUNNER_SILENCE_MS: a local batch whose runner is silent this long fails. */
  silenceMs: number;
}

export interface OAuthConfig {
  jwksUrl: string;
  issuer: string;
  audience: string;
  organizationClaim: string;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

/**
 * Default body limit of a batch start (other operations take at most 16 MiB, see body-limits):
 * the largest start within the spec's bounds, written in ASCII, is 100 cases of a
 * 1,000,000-character prepare source, 24 scripted replies of 4,000 characters and 12 tags of
 * 40, about 1,097,000 bytes each with their JSON, so 109.7 MB; 112 MiB (117.4 MB) leaves 7% for
 * the escapes of quotes, backslashes and newlines in the sources and for the suite and variants.
 */
export const DEFAULT_MAX_BODY_BYTES = 112 * 1024 * 1024;

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): AssayConfig {
  // The model client reads it per call (in local mode from the user's own environment); a bad value is refused here, at start.
  integer(env, 'ASSAY_PROVIDER_TIMEOUT_MS', 60000, 1, 3600000);
  const trialLeaseMs = integer(env, 'ASSAY_TRIAL_LEASE_MS', 30000, 1000, 3600000);
  return {
    host: text(env, 'HOST') ?? '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    dataDir: path.resolve(text(env, 'ASSAY_DATA_DIR') ?? './data'),
    eventStoreUrl: connectionString(env, 'EVENTSTORE_URL', eventStoreDbRefusal),
    eventStoreMaxAppendBytes: integer(env, 'ASSAY_EVENTSTORE_MAX_APPEND_BYTES', 1024 * 1024, 1024, 2 ** 31 - 1),
    eventStoreChainLeaseMs: chainLeaseMs(env, trialLeaseMs),
    mongodbUrl: connectionString(env, 'MONGODB_URL', mongodbRefusal),
    ...initialKey(env),
    masterKey: masterKey(env),
    oauth: oauth(env),
    maxBodyBytes: integer(env, 'ASSAY_MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, 1024, 2 ** 31 - 1),
    readYourWritesTimeoutMs: integer(env, 'ASSAY_READ_YOUR_WRITES_TIMEOUT_MS', 5000, 0, 60000),
    logLevel: logLevel(env),
    watchStreamsPerOrganization: integer(env, 'ASSAY_WATCH_STREAMS_PER_ORG', 16, 1, 10000),
    metrics: metrics(env),
    snapshotEvery: integer(env, 'ASSAY_SNAPSHOT_EVERY', 10000, 0, 1000000000),
    projectionLeaseMs: integer(env, 'ASSAY_PROJECTION_LEASE_MS', 10000, 1000, 3600000),
    execution: {
      configPath: configPath(env),
      agentsDir: absolutePath(env, 'ASSAY_AGENTS_DIR'),
      maxParallelTrials: integer(env, 'ASSAY_MAX_PARALLEL_TRIALS', 8, 1, 256),
      outputCapBytes: integer(env, 'ASSAY_OUTPUT_CAP', 65536, 1024, 16 * 1024 * 1024),
      verifyTimeoutMs: integer(env, 'ASSAY_VERIFY_TIMEOUT_MS', 300000, 1000, 3600000),
      validatorTimeoutMs: integer(env, 'ASSAY_VALIDATOR_TIMEOUT_MS', 120000, 1000, 3600000),
      runner: {
        leaseMs: integer(env, 'ASSAY_RUNNER_LEASE_MS', 900000, 1000, 86400000),
        silenceMs: integer(env, 'ASSAY_RUNNER_SILENCE_MS', 600000, 1000, 86400000),
      },
      claims: {
        instanceId: instanceId(env),
        leaseMs: trialLeaseMs,
      },
    },
  };
}

const DEFAULT_CHAIN_LEASE_MS = 5000;

/**
 * A writer that dies between its claim on an organization's chain and its events holds that
 * organization's appends, on every instance, for the chain lease: the outcomes of trials among
 * them. So it stays at most a quarter of the trial lease; the default is 5 s, or a quarter of a
 * shorter trial lease.
 */
function chainLeaseMs(env: Env, trialLeaseMs: number): number {
  const quarter = Math.floor(trialLeaseMs / 4);
  const value = integer(env, 'ASSAY_EVENTSTORE_CHAIN_LEASE_MS', Math.min(DEFAULT_CHAIN_LEASE_MS, quarter), 100, 3600000);
  if (value > quarter) {
    throw new ConfigError(
      'ASSAY_EVENTSTORE_CHAIN_LEASE_MS',
      `${value} ms is more than a quarter of ASSAY_TRIAL_LEASE_MS (${trialLeaseMs} ms): a writer that stopped mid-append would hold its organization's appends until trials lapse; use at most ${quarter}.`,
    );
  }
  return value;
}

/** Printable, short, and safe in logs and event data; the default is unique per process start. */
function instanceId(env: Env): string {
  const value = text(env, 'ASSAY_INSTANCE_ID');
  if (value === null) return `${hostname()}-${process.pid}-${Date.now().toString(36)}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/.test(value)) {
    throw new ConfigError('ASSAY_INSTANCE_ID', 'use 1 to 128 letters, digits and . _ : @ -, starting with a letter or digit.');
  }
  return value;
}

function absolutePath(env: Env, name: string): string | null {
  const value = text(env, name);
  return value === null ? null : path.resolve(value);
}

function configPath(env: Env): string | null {
  const configured = text(env, 'ASSAY_CONFIG');
  return configured === null ? null : path.resolve(configured);
}

function text(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = text(env, name);
  if (value === null) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(name, `"${value}" is not a whole number from ${min} to ${max}.`);
  }
  return Number(value);
}

/** A store's connection string, in any form its client takes (see connection-strings.ts). */
function connectionString(env: Env, name: string, refusal: (value: string) => Refusal): string | null {
  const value = text(env, name);
  if (value === null) return null;
  const problem = refusal(value);
  if (problem !== null) throw new ConfigError(name, problem);
  return value;
}

const ORGANIZATION_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** Organization ids: lower-case letters, digits, `-` and `_`, up to 63 characters. */
export function isOrganizationId(value: string): boolean {
  return ORGANIZATION_PATTERN.test(value);
}

function initialKey(env: Env): Pick<AssayConfig, 'initOrg' | 'initApiKey'> {
  const initOrg = text(env, 'ASSAY_INIT_ORG');
  const initApiKey = text(env, 'ASSAY_INIT_API_KEY');
  if ((initOrg === null) !== (initApiKey === null)) {
    const missing = initOrg === null ? 'ASSAY_INIT_ORG' : 'ASSAY_INIT_API_KEY';
    throw new ConfigError(missing, 'ASSAY_INIT_ORG and ASSAY_INIT_API_KEY must be set together.');
  }
  if (initOrg !== null && !isOrganizationId(initOrg)) {
    throw new ConfigError('ASSAY_INIT_ORG', 'use lower-case letters, digits, "-" and "_" (at most 63).');
  }
  if (initApiKey !== null && (initApiKey.length < 20 || initApiKey.length > 256 || /\s/.test(initApiKey))) {
    throw new ConfigError('ASSAY_INIT_API_KEY', 'use 20 to 256 characters without spaces (a high-entropy secret).');
  }
  return { initOrg, initApiKey };
}

function masterKey(env: Env): Buffer | null {
  const value = text(env, 'ASSAY_MASTER_KEY');
  if (value === null) return null;
  const key = Buffer.from(value, 'base64');
  if (key.length !== 32 || key.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) {
    throw new ConfigError('ASSAY_MASTER_KEY', 'must be 32 bytes in base64 (for example: openssl rand -base64 32).');
  }
  return key;
}

function oauth(env: Env): OAuthConfig | null {
  const jwksUrl = text(env, 'ASSAY_OAUTH_JWKS_URL');
  if (jwksUrl === null) return null;
  try {
    if (!['http:', 'https:'].includes(new URL(jwksUrl).protocol)) throw new Error('scheme');
  } catch {
    throw new ConfigError('ASSAY_OAUTH_JWKS_URL', `"${jwksUrl}" is not an http(s) URL.`);
  }
  const issuer = text(env, 'ASSAY_OAUTH_ISSUER');
  if (issuer === null) throw new ConfigError('ASSAY_OAUTH_ISSUER', 'is required when ASSAY_OAUTH_JWKS_URL is set.');
  const audience = text(env, 'ASSAY_OAUTH_AUDIENCE');
  if (audience === null) throw new ConfigError('ASSAY_OAUTH_AUDIENCE', 'is required when ASSAY_OAUTH_JWKS_URL is set.');
  return { jwksUrl, issuer, audience, organizationClaim: text(env, 'ASSAY_OAUTH_ORG_CLAIM') ?? 'org_id' };
}

export const LOOPBACK_RANGES = ['127.0.0.0/8', '::1/128'];

function metrics(env: Env): MetricsSettings {
  const flag = text(env, 'ASSAY_METRICS') ?? '0';
  if (flag !== '0' && flag !== '1') throw new ConfigError('ASSAY_METRICS', `"${flag}" is not 0 or 1.`);
  const listed = text(env, 'ASSAY_METRICS_ALLOW');
  const allow =
    listed === null
      ? LOOPBACK_RANGES
      : listed
          .split(',')
          .map((range) => range.trim())
          .filter((range) => range !== '');
  for (const range of allow) {
    if (!isCidr(range)) throw new ConfigError('ASSAY_METRICS_ALLOW', `"${range}" is not a CIDR range (for example 10.0.0.0/8 or ::1/128).`);
  }
  return { enabled: flag === '1', allow };
}

function isCidr(range: string): boolean {
  const parts = range.split('/');
  if (parts.length !== 2 || !/^\d{1,3}$/.test(parts[1])) return false;
  const [address, bits] = parts;
  const family = net.isIP(address);
  return family !== 0 && Number(bits) <= (family === 4 ? 32 : 128);
}

function logLevel(env: Env): LogLevel {
  const value = text(env, 'ASSAY_LOG_LEVEL') ?? 'info';
  const levels: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
  if (!levels.includes(value as LogLevel)) {
    throw new ConfigError('ASSAY_LOG_LEVEL', `"${value}" is not one of ${levels.join(', ')}.`);
  }
  return value as LogLevel;
}
