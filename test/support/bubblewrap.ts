import * as path from 'node:path';
import { bubblewrapMissing } from '#trial-runner';

/**
 * The one decision whether this host can run the bubblewrap tests (the same check the server's
 * probe starts with): bwrap, and prlimit and setpriv, found in PATH. Without them the tests that
 * need a real sandbox are skipped, and the reason is printed once per test file; CI installs
 * bubblewrap (.ci/run), so there they run.
 */
export const bubblewrapAbsent: string | null = bubblewrapMissing();

if (bubblewrapAbsent !== null) {
  // Straight to stderr, as the contract suites do: jest drops console output of a file whose tests all skip.
  process.stderr.write(`Skipping the bubblewrap tests of ${path.basename(expect.getState().testPath ?? 'this file')}: ${bubblewrapAbsent}\n`);
}

/** `it` when bubblewrap is usable here, else `it.skip`. */
export const itWithBubblewrap: jest.It = bubblewrapAbsent === null ? it : it.skip;
/** `describe` when bubblewrap is usable here, else `describe.skip`. */
export const describeWithBubblewrap: jest.Describe = bubblewrapAbsent === null ? describe : describe.skip;
