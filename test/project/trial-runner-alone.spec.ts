import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The trial engine (src/trial-runner) loads alone: the CLI's local mode runs it on a user's
 * machine, with no Nest application and no store. Which file may import which is checked by
 * dependency-cruiser (`npm run lint:layers`, test/project/layer-rules.spec.ts); this checks what
 * actually loads, in a fresh process, from the build.
 */
describe('the trial engine is importable alone', () => {
  it('loads in a fresh node process without loading Nest, a store or the wiring', () => {
    const compiled = path.join(ROOT, 'dist', 'trial-runner', 'index.js');
    if (!fs.existsSync(compiled)) throw new Error(`${compiled} is missing: run "npm run build" first (npm test does).`);
    const script = `const runner = require(${JSON.stringify(compiled)});
      const loaded = Object.keys(require.cache).filter((file) => /node_modules[\\\\/](@nestjs|better-sqlite3|mongodb|@eventstore)|[\\\\/]dist[\\\\/](runtime|main|app\\.module|modules|infrastructure[\\\\/](event-store|read-store))/.test(file));
      console.log(JSON.stringify({ exports: typeof runner.createTrialRunner, loaded }));`;
    const result = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ exports: 'function', loaded: [] });
  });
});
