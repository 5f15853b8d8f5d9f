import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

declare global {
  // Filled by tempDir, emptied by the test environment (test/support/test-environment.js) when the file ends.
  var __assayTempDirs: string[] | undefined;
}

/** A new directory in the system temporary directory, removed when the test file ends, passed or failed. */
export function tempDir(prefix = 'assay-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  (globalThis.__assayTempDirs ??= []).push(dir);
  return dir;
}
