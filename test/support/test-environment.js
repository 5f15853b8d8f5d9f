/**
 * The test environment of every test file: Node's, plus the clean-up of the run's temporary
 * directory (`TMPDIR`, made for this run by temp-audit.js; never the system's own). Tests register
 * the directories they make (`tempDir`, `TempDirs`); they are removed when the file ends, passed
 * or failed, after its own afterAll hooks have closed its servers. Anything else that a file left
 * there under our prefixes (a leak of the service, a test that made a directory by hand) is named
 * in a warning and removed too, so that a leak is seen and the next file starts clean.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

const OURS = /^(assay-|assay_)/;

class AssayTestEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
    this.global.__assayTempDirs = [];
  }

  async setup() {
    await super.setup();
    // Only a run's own directory is audited: outside `npm test` (one file run by hand), nothing is removed but the file's own directories.
    this.audited = process.env.ASSAY_TEST_RUN_DIR !== undefined && os.tmpdir() === process.env.ASSAY_TEST_RUN_DIR;
    this.before = new Set(listTemp());
  }

  async teardown() {
    for (const dir of this.global.__assayTempDirs.splice(0)) remove(dir);
    const leftovers = this.audited ? listTemp().filter((name) => !this.before.has(name) && OURS.test(name)) : [];
    if (leftovers.length > 0) {
      const file = path.relative(process.cwd(), this.testPath);
      process.stderr.write(`[temp clean-up] ${file} left ${leftovers.length} entr${leftovers.length === 1 ? 'y' : 'ies'} in ${os.tmpdir()}: ${leftovers.slice(0, 5).join(', ')}${leftovers.length > 5 ? ', …' : ''}; removed\n`);
      for (const name of leftovers) remove(path.join(os.tmpdir(), name));
      if (process.env.ASSAY_TEST_LEAK_LOG) fs.appendFileSync(process.env.ASSAY_TEST_LEAK_LOG, `${file}: ${leftovers.join(', ')}\n`);
    }
    await super.teardown();
  }
}

function listTemp() {
  try {
    return fs.readdirSync(os.tmpdir());
  } catch {
    return [];
  }
}

function remove(target) {
  try {
    fs.rmSync(target, { recursive: true, force: true, maxRetries: 3 });
  } catch (error) {
    process.stderr.write(`[temp clean-up] cannot remove ${target}: ${error.code ?? error.message}\n`);
  }
}

module.exports = AssayTestEnvironment;
