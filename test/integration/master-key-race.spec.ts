import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { tempDir } from '../support/temp-dirs';

/** The compiled module (npm test builds first), run by processes of their own, as instances started together run it. */
const MASTER_KEY = path.resolve(__dirname, '../../dist/infrastructure/secrets/master-key.js');
/** Waits for the given moment (all four start at once), then takes the data directory's key; prints its id. */
const STARTER = `
const { withMasterKey, masterKeyId } = require(${JSON.stringify(MASTER_KEY)});
const logger = { warn() {}, info() {}, error() {} };
const at = Number(process.argv[2]);
while (Date.now() < at) {}
try {
  const config = withMasterKey({ dataDir: process.argv[1], masterKey: null, eventStoreUrl: null }, logger);
  process.stdout.write(masterKeyId(config.masterKey));
} catch (error) {
  process.stderr.write(String(error && error.message));
  process.exit(1);
}`;

function start(dataDir: string, at: number): Promise<{ id: string; failure: string | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', STARTER, dataDir, String(at)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let id = '';
    let error = '';
    child.stdout.on('data', (chunk: Buffer) => (id += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (error += chunk.toString()));
    // 'close', not 'exit': a process may exit before its output has all been read.
    child.on('close', (code) => resolve({ id, failure: code === 0 ? null : error || `exit ${code}` }));
  });
}

describe('the master key file made by several processes at once', () => {
  it('gives every process starting together on a new data directory the same whole key', async () => {
    const failures: string[] = [];
    for (let round = 0; round < 12; round += 1) {
      const dataDir = tempDir('assay-key-race-');
      const started = await Promise.all(Array.from({ length: 6 }, () => start(dataDir, Date.now() + 400)));
      failures.push(...started.flatMap((one) => (one.failure === null ? [] : [one.failure])));
      const ids = new Set(started.filter((one) => one.failure === null).map((one) => one.id));
      // One key for all: none wrote its own over another's.
      expect(ids.size).toBeLessThanOrEqual(1);
    }
    // Before: a process could read the file another had created and not yet written ("must hold 32 bytes").
    expect(failures).toEqual([]);
  }, 120_000);
});
