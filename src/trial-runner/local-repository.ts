import { realpath, stat } from 'node:fs/promises';
import { localRepositoryPath, repositoryLocation } from './repository-urls';
import { readableProblem } from './sandbox/sandbox-driver';
import type { TrialSession } from './trial-session';
import { TrialVoid } from './trial-verdict';

/**
 * The real path of a local repository a case names (a path, or `file://`), already allowed by
 * `repositories.allowLocal`; null for any other URL. The clone's sandbox sees only the system and
 * /tmp, so the repository is bound read-only into it, at its real path (a link in the given path
 * could point anywhere once inside), unless it holds or lies inside what trials never see.
 */
export async function localRepository(session: TrialSession, url: string, shown: string): Promise<string | null> {
  const location = repositoryLocation(url);
  if ('refused' in location || location.transport !== 'file') return null;
  const given = localRepositoryPath(url);
  if ('refused' in given) throw new TrialVoid(`the repository url ${given.refused}`, ['source']);
  const where = session.settings.runsOn === 'local' ? 'this machine' : 'the server';
  let real: string;
  try {
    real = await realpath(given.path);
    if (!(await stat(real)).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'does not exist' : code === 'ENOTDIR' ? 'is not a directory' : `cannot be read (${code ?? 'error'})`;
    throw new TrialVoid(`the repository ${shown} ${reason} on ${where}`, ['source']);
  }
  const problem = readableProblem(real, session.settings.hiddenPaths);
  if (problem !== null) throw new TrialVoid(`the repository ${shown} ${problem}: name a repository elsewhere on ${where}`, ['source']);
  return real;
}
