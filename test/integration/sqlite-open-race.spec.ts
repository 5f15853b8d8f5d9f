import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { tempDir } from '../support/temp-dirs';

/** The compiled store (npm test builds first), opened by processes of their own, as instances started together open it. */
const STORE = path.resolve(__dirname, '../../dist/infrastructure/event-store/sqlite/sqlite-event-store.js');
const OPENER = `
const { SqliteEventStore } = require(${JSON.stringify(STORE)});
try {
  SqliteEventStore.open(process.argv[1]).close().then(() => process.exit(0));
} catch (error) {
  process.stderr.write(String(error && error.message));
  process.exit(1);
}`;

function open(file: string): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', OPENER, file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let error = '';
    child.stderr.on('data', (chunk: Buffer) => (error += chunk.toString()));
    child.on('close', (code) => resolve(code === 0 ? null : error || `exit ${code}`));
  });
}

describe('the SQLite event log opened by several processes at once', () => {
  it('opens a new file from four processes at the same moment, round after round, without a busy or migration error', async () => {
    const failures: string[] = [];
    for (let round = 0; round < 12; round += 1) {
      const file = path.join(tempDir('assay-open-race-'), 'events.sqlite');
      for (const failure of await Promise.all([open(file), open(file), open(file), open(file)])) if (failure !== null) failures.push(failure);
    }
    // Before: "duplicate column name: organization" or "database is locked" in about one open in ten.
    expect(failures).toEqual([]);
  }, 120_000);
});
