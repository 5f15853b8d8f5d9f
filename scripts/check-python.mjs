// Compiles the Python sources (`python3 -m py_compile`, the byte code written to a temporary
// directory, never beside the sources): a syntax error fails `npm run lint` rather than the first
// trial. Without python3 it says so and passes: the server then uses the Node spawn helper.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const files = [];
(function walk(directory) {
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.name.endsWith('.py')) files.push(full);
  }
})(path.join(root, 'src'));

const probe = spawnSync('python3', ['--version'], { encoding: 'utf8' });
if (probe.error) {
  console.log(`python3 is not installed: ${files.length} Python file(s) not compiled (the Node spawn helper is used without it)`);
  process.exit(0);
}
const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-pycache-'));
try {
  const run = spawnSync('python3', ['-m', 'py_compile', ...files], { encoding: 'utf8', env: { ...process.env, PYTHONPYCACHEPREFIX: cache } });
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
  if (run.status !== 0) process.exit(run.status ?? 1);
  console.log(`py_compile: ${files.length} Python file(s) compile (${probe.stdout.trim()})`);
} finally {
  fs.rmSync(cache, { recursive: true, force: true });
}
