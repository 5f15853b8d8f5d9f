import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { CLI, ChildServer, INIT_KEY, startChild, tempDir, waitUntil } from '../support/servers';

const run = promisify(execFile);

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `assay keys create` against the event log a running server uses: a misspelt organization
 * must be refused, not founded; `--create-org` founds it on purpose.
 */
describe('assay keys create and organizations', () => {
  let dataDir: string;
  let server: ChildServer | null = null;

  const cli = async (...args: string[]): Promise<CliResult> => {
    const options = { env: { PATH: process.env.PATH ?? '', ASSAY_DATA_DIR: dataDir } };
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, ...args], options);
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };

  const events = (): Array<{ type: string; stream: string }> => {
    const db = new Database(path.join(dataDir, 'events.sqlite'), { readonly: true });
    try {
      return db.prepare('SELECT type, stream FROM events ORDER BY position').all() as Array<{ type: string; stream: string }>;
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    dataDir = tempDir();
    // ASSAY_INIT_ORG founds `acme` at start, as an operator's headless set-up does.
    server = await startChild({ ASSAY_DATA_DIR: dataDir, ASSAY_INIT_ORG: 'acme', ASSAY_INIT_API_KEY: INIT_KEY });
  });

  afterAll(async () => {
    await server?.stop('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses an organization that does not exist, prints no key and appends nothing', async () => {
    const before = events();
    const result = await cli('keys', 'create', '--org', 'acmee', '--permissions', 'evals:read');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('Organization "acmee" does not exist');
    expect(result.stderr).toContain('--create-org');
    expect(result.stdout + result.stderr).not.toMatch(/assay_/);
    expect(events()).toEqual(before);
  });

  it('issues a key for an existing organization without --create-org', async () => {
    const result = await cli('keys', 'create', '--org', 'acme', '--permissions', 'evals:read', '--name', 'ci');
    expect(result.code).toBe(0);
    const client = server!.client.withKey(result.stdout.trim().split('\n').pop()!);
    await waitUntil(async () => (await client.call('auth.whoami')).status === 200, 5000, 25);
    expect((await client.call('auth.whoami')).body).toMatchObject({ organization: 'acme', name: 'ci' });
  });

  it('creates the organization with --create-org, once, and the key authenticates over HTTP', async () => {
    const first = await cli('keys', 'create', '--org', 'beta', '--permissions', 'prompts:read', '--create-org');
    expect(first.code).toBe(0);
    const again = await cli('keys', 'create', '--org', 'beta', '--permissions', 'prompts:read', '--create-org');
    expect(again.code).toBe(0);
    const created = events()
      .filter((event) => event.type === 'OrganizationCreated')
      .map((event) => event.stream);
    expect(created.sort()).toEqual(['organization-acme', 'organization-beta']);

    const client = server!.client.withKey(first.stdout.trim().split('\n').pop()!);
    await waitUntil(async () => (await client.call('auth.whoami')).status === 200, 5000, 25);
    expect((await client.call('auth.whoami')).body).toMatchObject({ organization: 'beta', permissions: ['prompts:read'] });
  });

  it('refuses a value given to --create-org as a usage error', async () => {
    const result = await cli('keys', 'create', '--org', 'gamma', '--permissions', 'evals:read', '--create-org=yes');
    expect(result.code).toBe(64);
    expect(result.stderr).toContain('--create-org takes no value');
  });
});
