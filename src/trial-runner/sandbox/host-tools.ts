import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The programs that start a sandbox or its commands (and chattr, which marks the trials root, and
 * git, which diffs the service's copies of a trial's changed files),
 * found by absolute path in the server's own PATH (read when asked), never the trial's: the
 * environment a trial's command gets must not decide which bwrap, prlimit, setpriv or spawn
 * helper's python3 runs, as root, before the trial drops to its user.
 */
export type HostTool = 'bwrap' | 'prlimit' | 'setpriv' | 'python3' | 'chattr' | 'git';

/** Found once per tool and server PATH: every step of every trial asks. */
const found = new Map<string, string | null>();

export function findHostTool(name: HostTool): string | null {
  const key = `${name}\0${process.env.PATH ?? ''}`;
  if (!found.has(key)) found.set(key, search(name));
  return found.get(key) ?? null;
}

function search(name: HostTool): string | null {
  const searched = (process.env.PATH ?? '').split(path.delimiter).filter((entry) => path.isAbsolute(entry));
  for (const directory of searched) {
    const candidate = path.join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

/**
 * Why bubblewrap cannot be used on this host, or null when its programs are all there: the
 * one decision tests and the start-up log share.
 */
export function bubblewrapMissing(): string | null {
  if (findHostTool('bwrap') === null) return 'bwrap (bubblewrap) is not installed';
  if (runsAsRoot() && findHostTool('setpriv') === null) return 'setpriv (util-linux) is not installed: trials could not drop root';
  if (findHostTool('prlimit') === null) return 'prlimit (util-linux) is not installed: trial limits could not be set';
  return null;
}

export function runsAsRoot(): boolean {
  return process.getuid?.() === 0;
}
