import { lchown, mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { TrialUser } from '../../sandbox/trial-user';

/**
 * Writes an agent's settings files into the trial's HOME, owned by the trial's user (the agent
 * writes beside them: sessions, caches). Paths are the driver's own, relative to HOME.
 */
export async function writeHomeFiles(home: string, files: Record<string, string>, user: TrialUser | null): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const file = path.join(home, relative);
    const made: string[] = [];
    let directory = path.dirname(file);
    while (directory !== home && directory.startsWith(`${home}${path.sep}`)) {
      made.unshift(directory);
      directory = path.dirname(directory);
    }
    for (const entry of made) {
      await mkdir(entry, { recursive: false, mode: 0o700 }).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      });
      if (user !== null) await lchown(entry, user.uid, user.gid);
    }
    await writeFile(file, content, { mode: 0o600 });
    if (user !== null) await lchown(file, user.uid, user.gid);
  }
}
