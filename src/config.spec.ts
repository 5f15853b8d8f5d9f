import { hostname } from 'node:os';
import * as path from 'node:path';
import { ConfigError, DEFAULT_MAX_BODY_BYTES, loadConfig } from './config';

function failure(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration from the environment', () => {
  it('has defaults that serve on 127.0.0.1:8080 from ./data with embedded stores', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ host: '127.0.0.1', port: 8080, eventStoreUrl: null, mongodbUrl: null, oauth: null, maxBodyBytes: DEFAULT_MAX_BODY_BYTES });
    expect(config.dataDir.endsWith('/data')).toBe(true);
  });

  it('holds 100 cases with 1,000,000-character prepare sources within the default body limit', () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBeGreaterThan(100 * 1_000_000 * 1.05);
  });

  it('sets the default body limit within 10% above the largest start the spec bounds', () => {
    // Every field the spec bounds at its bound, in ASCII; cases differ only in their ids.
    const largestCase = {
      id: 'c'.repeat(100),
      name: 'n'.repeat(200),
      maxTurns: 50,
      timeoutMs: 3_600_000,
      user: { kind: 'scripted', replies: Array(24).fill('r'.repeat(4000)) },
      prepare: { name: 'p'.repeat(100), source: 's'.repeat(1_000_000) },
      source: { kind: 'empty' },
      tags: Array(12).fill('t'.repeat(40)),
    };
    const suite = { id: 's'.repeat(100), prompt: 'p'.repeat(200_000), name: 'n'.repeat(200), source: { kind: 'empty' } };
    const variants = Array(20).fill({ harness: 'harness_kind_1', model: 'm'.repeat(200), sandbox: 'sandbox_kind_1' });
    const frame = JSON.stringify({ suite, cases: [], variants, trials: 10, checksIn: true });
    const largest = Buffer.byteLength(frame) + 100 * (Buffer.byteLength(JSON.stringify(largestCase)) + 1);
    expect(DEFAULT_MAX_BODY_BYTES).toBeGreaterThan(largest);
    expect(DEFAULT_MAX_BODY_BYTES).toBeLessThan(largest * 1.1);
  });

  it.each([
    ['PORT', { PORT: '70000' }],
    ['PORT', { PORT: 'http' }],
    ['EVENTSTORE_URL', { EVENTSTORE_URL: 'http://x' }],
    ['MONGODB_URL', { MONGODB_URL: 'not a url' }],
    ['ASSAY_INIT_API_KEY', { ASSAY_INIT_ORG: 'acme' }],
    ['ASSAY_INIT_ORG', { ASSAY_INIT_ORG: 'Bad Org', ASSAY_INIT_API_KEY: 'k'.repeat(32) }],
    ['ASSAY_INIT_API_KEY', { ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: 'short' }],
    ['ASSAY_MASTER_KEY', { ASSAY_MASTER_KEY: Buffer.alloc(31).toString('base64') }],
    ['ASSAY_OAUTH_ISSUER', { ASSAY_OAUTH_JWKS_URL: 'https://idp/jwks' }],
    ['ASSAY_MAX_BODY_BYTES', { ASSAY_MAX_BODY_BYTES: '-1' }],
  ])('names %s when it is wrong', (variable, env) => {
    const error = failure(env);
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
  });

  it('reads the trial execution settings, with their defaults', () => {
    expect(loadConfig({}).execution).toEqual({
      configPath: null,
      agentsDir: null,
      maxParallelTrials: 8,
      outputCapBytes: 65536,
      verifyTimeoutMs: 300000,
      validatorTimeoutMs: 120000,
      runner: { leaseMs: 900000, silenceMs: 600000 },
      claims: { instanceId: expect.stringMatching(new RegExp(`^${hostname()}-${process.pid}-[0-9a-z]+$`)), leaseMs: 30000 },
    });
    const set = loadConfig({
      ASSAY_CONFIG: '/etc/assay.yaml',
      ASSAY_AGENTS_DIR: 'agents-cache',
      ASSAY_MAX_PARALLEL_TRIALS: '32',
      ASSAY_OUTPUT_CAP: '4096',
      ASSAY_VERIFY_TIMEOUT_MS: '5000',
      ASSAY_VALIDATOR_TIMEOUT_MS: '1000',
      ASSAY_RUNNER_LEASE_MS: '2000',
      ASSAY_RUNNER_SILENCE_MS: '3000',
      ASSAY_INSTANCE_ID: 'eu-west-1a.web-2',
      ASSAY_TRIAL_LEASE_MS: '1000',
    });
    expect(set.execution).toEqual({
      configPath: '/etc/assay.yaml',
      agentsDir: path.resolve('agents-cache'),
      maxParallelTrials: 32,
      outputCapBytes: 4096,
      verifyTimeoutMs: 5000,
      validatorTimeoutMs: 1000,
      runner: { leaseMs: 2000, silenceMs: 3000 },
      claims: { instanceId: 'eu-west-1a.web-2', leaseMs: 1000 },
    });
    for (const name of [
      'ASSAY_MAX_PARALLEL_TRIALS',
      'ASSAY_OUTPUT_CAP',
      'ASSAY_VERIFY_TIMEOUT_MS',
      'ASSAY_RUNNER_LEASE_MS',
      'ASSAY_RUNNER_SILENCE_MS',
      'ASSAY_PROVIDER_TIMEOUT_MS',
      'ASSAY_VALIDATOR_TIMEOUT_MS',
      'ASSAY_TRIAL_LEASE_MS',
    ]) {
      expect(() => loadConfig({ [name]: 'lots' })).toThrow(name);
    }
    // ASSAY_VALIDATOR_TIMEOUT_MS: 1000 to 3600000.
    expect(() => loadConfig({ ASSAY_VALIDATOR_TIMEOUT_MS: '999' })).toThrow('ASSAY_VALIDATOR_TIMEOUT_MS');
    expect(() => loadConfig({ ASSAY_VALIDATOR_TIMEOUT_MS: '3600001' })).toThrow('ASSAY_VALIDATOR_TIMEOUT_MS');
    expect(loadConfig({ ASSAY_VALIDATOR_TIMEOUT_MS: '3600000' }).execution.validatorTimeoutMs).toBe(3600000);
  });

  it('keeps the EventStoreDB chain lease at most a quarter of the trial lease', () => {
    // ASSAY_EVENTSTORE_CHAIN_LEASE_MS: 100 to 3600000; default 5000, or a quarter of a shorter trial lease.
    expect(loadConfig({}).eventStoreChainLeaseMs).toBe(5000);
    expect(loadConfig({ ASSAY_TRIAL_LEASE_MS: '3000' }).eventStoreChainLeaseMs).toBe(750);
    expect(loadConfig({ ASSAY_TRIAL_LEASE_MS: '1000' }).eventStoreChainLeaseMs).toBe(250);
    expect(() => loadConfig({ ASSAY_EVENTSTORE_CHAIN_LEASE_MS: '99' })).toThrow('ASSAY_EVENTSTORE_CHAIN_LEASE_MS');
    expect(loadConfig({ ASSAY_EVENTSTORE_CHAIN_LEASE_MS: '100' }).eventStoreChainLeaseMs).toBe(100);
    expect(loadConfig({ ASSAY_EVENTSTORE_CHAIN_LEASE_MS: '7500' }).eventStoreChainLeaseMs).toBe(7500);
    // A stalled claim holds the organization's appends this long: a trial lease must outlast it.
    expect(() => loadConfig({ ASSAY_EVENTSTORE_CHAIN_LEASE_MS: '7501' })).toThrow(
      'ASSAY_EVENTSTORE_CHAIN_LEASE_MS: 7501 ms is more than a quarter of ASSAY_TRIAL_LEASE_MS (30000 ms)',
    );
    expect(loadConfig({ ASSAY_EVENTSTORE_CHAIN_LEASE_MS: '900000', ASSAY_TRIAL_LEASE_MS: '3600000' }).eventStoreChainLeaseMs).toBe(900000);
    expect(() => loadConfig({ ASSAY_EVENTSTORE_CHAIN_LEASE_MS: 'soon' })).toThrow('ASSAY_EVENTSTORE_CHAIN_LEASE_MS');
  });

  it('reads the projection lease within its bounds', () => {
    // ASSAY_PROJECTION_LEASE_MS: 1000 to 3600000, default 10000.
    expect(loadConfig({}).projectionLeaseMs).toBe(10000);
    expect(() => loadConfig({ ASSAY_PROJECTION_LEASE_MS: '999' })).toThrow('ASSAY_PROJECTION_LEASE_MS');
    expect(loadConfig({ ASSAY_PROJECTION_LEASE_MS: '1000' }).projectionLeaseMs).toBe(1000);
    expect(loadConfig({ ASSAY_PROJECTION_LEASE_MS: '3600000' }).projectionLeaseMs).toBe(3600000);
    expect(() => loadConfig({ ASSAY_PROJECTION_LEASE_MS: '3600001' })).toThrow('ASSAY_PROJECTION_LEASE_MS');
    expect(() => loadConfig({ ASSAY_PROJECTION_LEASE_MS: 'lots' })).toThrow('ASSAY_PROJECTION_LEASE_MS');
  });

  it('reads the instance name and the trial lease, within their bounds', () => {
    // ASSAY_TRIAL_LEASE_MS: 1000 to 3600000.
    expect(() => loadConfig({ ASSAY_TRIAL_LEASE_MS: '999' })).toThrow('ASSAY_TRIAL_LEASE_MS');
    expect(() => loadConfig({ ASSAY_TRIAL_LEASE_MS: '3600001' })).toThrow('ASSAY_TRIAL_LEASE_MS');
    expect(loadConfig({ ASSAY_TRIAL_LEASE_MS: '3600000' }).execution.claims.leaseMs).toBe(3600000);
    // ASSAY_INSTANCE_ID: 1 to 128 of letters, digits and . _ : @ -, starting with a letter or digit.
    expect(loadConfig({ ASSAY_INSTANCE_ID: 'a'.repeat(128) }).execution.claims.instanceId).toBe('a'.repeat(128));
    for (const bad of ['a'.repeat(129), '-leading', 'has space', 'slash/y', 'new\nline']) {
      expect(() => loadConfig({ ASSAY_INSTANCE_ID: bad })).toThrow('ASSAY_INSTANCE_ID');
    }
    // The default names this process (host, pid, start time), so two processes never share it.
    expect(loadConfig({}).execution.claims.instanceId).toContain(`-${process.pid}-`);
  });

  it('accepts a 32-byte base64 master key', () => {
    const key = Buffer.alloc(32, 7);
    expect(loadConfig({ ASSAY_MASTER_KEY: key.toString('base64') }).masterKey).toEqual(key);
  });
});
