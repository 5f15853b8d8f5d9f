import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { holdDataDirectoryAlone } from '#infrastructure/locks/data-directory-lock';
import { masterKeyPath } from '#infrastructure/secrets/master-key';
import { ChildServer, childServersPerTest, CLI } from '../support/servers';
import { TempDirs } from '../support/trial-fixtures';

const dirs = new TempDirs();
const startServerChild = childServersPerTest();
afterAll(() => dirs.removeAll());

/** A real server on `dataDir`, its temporary directory the test's own. */
async function serverOn(dataDir: string): Promise<ChildServer> {
  return startServerChild({ ASSAY_DATA_DIR: dataDir, TMPDIR: dirs.make('assay-tmp-') });
}

function rotate(dataDir: string, ...args: string[]): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [CLI, 'keys', 'rotate-master', ...args], {
    env: { PATH: process.env.PATH ?? '', ASSAY_DATA_DIR: dataDir },
    encoding: 'utf8',
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

const keyOf = (dataDir: string) => readFileSync(masterKeyPath(dataDir), 'utf8');

describe('assay keys rotate-master and running servers', () => {
  it('is refused while a server runs on the data directory, and runs with --force', async () => {
    const dataDir = dirs.make('assay-data-');
    await serverOn(dataDir);
    const before = keyOf(dataDir);
    const refused = rotate(dataDir);
    expect(refused.status).toBe(1);
    expect(refused.output).toContain(`A server is running on ${dataDir}`);
    expect(refused.output).toContain('--force');
    expect(keyOf(dataDir)).toBe(before);

    const forced = rotate(dataDir, '--force');
    expect(forced).toEqual({ status: 0, output: expect.stringContaining('The key file now holds the new master key.') });
    expect(keyOf(dataDir)).not.toBe(before);
  });

  it('runs once the server has stopped, whether it stopped cleanly or was killed', async () => {
    const dataDir = dirs.make('assay-data-');
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const server = await serverOn(dataDir);
      expect(rotate(dataDir).status).toBe(1);
      await server.stop(signal);
      expect(rotate(dataDir)).toEqual({ status: 0, output: expect.stringContaining('Re-wrapped 0 data keys') });
    }
  });

  it('lets several servers share the data directory, and refuses while any of them runs', async () => {
    const dataDir = dirs.make('assay-data-');
    const [first] = [await serverOn(dataDir), await serverOn(dataDir)];
    await first.stop();
    expect(rotate(dataDir).status).toBe(1);
  });

  it('keeps a server from starting while a rotation holds the data directory', async () => {
    const dataDir = dirs.make('assay-data-');
    const lock = holdDataDirectoryAlone(dataDir, false, 'test');
    try {
      await expect(serverOn(dataDir)).rejects.toThrow(/A maintenance command \(assay keys rotate-master\) is running on/);
    } finally {
      lock?.release();
    }
    await serverOn(dataDir);
  });

  it('refuses an unknown argument', () => {
    const answer = rotate(dirs.make('assay-data-'), '--forse');
    expect(answer.status).toBe(64);
    expect(answer.output).toContain('Unexpected argument "--forse"');
  });
});
