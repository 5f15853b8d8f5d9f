/**
 * Global set-up and tear-down of `npm test`: the test environment names, in a file, every entry a
 * test file left in the system temporary directory; at the end of the run such a leak fails the
 * run, so that a leak of the service (a trial directory, a spawn helper's) is fixed, not hidden.
 */
const fs = require('node:fs');
const path = require('node:path');

const LEAK_LOG = path.join(__dirname, '..', '..', 'node_modules', '.cache', 'assay-temp-leaks.log');

async function setup() {
  fs.mkdirSync(path.dirname(LEAK_LOG), { recursive: true });
  fs.rmSync(LEAK_LOG, { force: true });
  process.env.ASSAY_TEST_LEAK_LOG = LEAK_LOG;
}

async function teardown() {
  const leaks = fs.existsSync(LEAK_LOG) ? fs.readFileSync(LEAK_LOG, 'utf8').trim() : '';
  if (leaks !== '') {
    throw new Error(`test files left entries in the system temporary directory (removed since, but each is a leak to fix):\n${leaks}`);
  }
}

module.exports = { setup, teardown, LEAK_LOG };
