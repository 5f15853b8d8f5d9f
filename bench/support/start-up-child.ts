/**
 * One server start in a process of its own, as a restart is: `node start-up-child.js <data dir>`
 * starts the server over that data directory, stops it, and prints one JSON line: `readyMs` from
 * the startServer() call to the server listening with its read models caught up (what the scale
 * suite's target is about), and `sinceProcessStartMs`, the same moment counted from the process's
 * start (Node's own start-up and the module loading included).
 */
import { loadConfig } from '../../src/config';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { startServer } from '../../src/main';

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error('Usage: start-up-child <data dir>');
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', ASSAY_DATA_DIR: dataDir, ASSAY_LOG_LEVEL: 'warn' });
  const started = performance.now();
  const server = await startServer(config, new JsonLogger('warn', (line) => process.stderr.write(`${line}\n`)));
  const ready = performance.now();
  await server.close();
  process.stdout.write(`${JSON.stringify({ readyMs: ready - started, sinceProcessStartMs: ready })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
