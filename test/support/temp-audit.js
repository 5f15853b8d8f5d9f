/**
 * Global set-up and tear-down of `npm test`. Each run gets a temporary directory of its own,
 * `TMPDIR` for the run and every child it starts: the test environment audits and cleans only
 * that directory, so nothing outside it (another program's files, another run's) is ever
 * touched. The environment names, in a file, every entry a test file left there; at the end of
 * the run such a leak fails the run, so that a leak of the service (a trial directory, a spawn
 * helper's) is fixed, not hidden. The run's directory is removed at the end either way.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const LEAK_LOG = path.join(__dirname, '..', '..', 'node_modules', '.cache', 'assay-temp-leaks.log');

async function setup() {
  fs.mkdirSync(path.dirname(LEAK_LOG), { recursive: true });
  fs.rmSync(LEAK_LOG, { force: true });
  process.env.ASSAY_TEST_LEAK_LOG = LEAK_LOG;
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-test-run-'));
  // Bubblewrap trials run as other users: they must reach their directories below this one.
  fs.chmodSync(runDir, 0o1777);
  process.env.ASSAY_TEST_RUN_DIR = runDir;
  process.env.TMPDIR = runDir;
}

async function teardown() {
  const runDir = process.env.ASSAY_TEST_RUN_DIR;
  if (runDir) fs.rmSync(runDir, { recursive: true, force: true, maxRetries: 3 });
  const leaks = fs.existsSync(LEAK_LOG) ? fs.readFileSync(LEAK_LOG, 'utf8').trim() : '';
  if (leaks !== '') {
    throw new Error(`test files left entries in the run's temporary directory (removed since, but each is a leak to fix):\n${leaks}`);
  }
}

module.exports = { setup, teardown, LEAK_LOG };
