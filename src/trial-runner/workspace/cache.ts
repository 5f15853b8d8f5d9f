import { randomBytes } from 'node:crypto';
import { cp, lstat, mkdir, rename, rm } from 'node:fs/promises';
import * as path from 'node:path';
import type { CacheSpec } from '#shared/eval-definitions';
import { sha256Of } from './snapshot';
import { ensureParents, workspacePath } from './workspace-paths';

/**
 * A case's cache `{key, path}`: a copy of the workspace path kept per organization and key at
 * `<dataDir>/cache/<org>/<sha256(key)>`, restored before set-up and saved once set-up succeeded.
 * Links are copied as links and never followed, so a link planted in the workspace cannot make
 * the service copy a host directory into the cache.
 */
export function cacheLocation(dataDir: string, organization: string, key: string): string {
  // An organization id is a safe directory name by its pattern; anything else is hashed.
  const owner = /^[a-z0-9][a-z0-9_-]{0,62}$/.test(organization) ? organization : sha256Of(organization);
  return path.join(dataDir, 'cache', owner, sha256Of(key));
}

/** Copies the cached entry into the workspace; false on a miss. A failed copy is a miss too. */
export async function restoreCache(dataDir: string, organization: string, cache: CacheSpec, workspace: string): Promise<boolean> {
  const stored = cacheLocation(dataDir, organization, cache.key);
  if ((await lstat(stored).catch(() => null)) === null) return false;
  const target = workspacePath(workspace, cache.path);
  await ensureParents(workspace, target);
  await rm(target, { recursive: true, force: true });
  try {
    await cp(stored, target, { recursive: true, verbatimSymlinks: true });
    return true;
  } catch {
    // A concurrent save replaced the entry mid-copy: start from nothing rather than half a cache.
    await rm(target, { recursive: true, force: true });
    return false;
  }
}

/** Replaces the cached entry with the workspace's; false when there is nothing to keep. */
export async function saveCache(dataDir: string, organization: string, cache: CacheSpec, workspace: string): Promise<boolean> {
  const source = workspacePath(workspace, cache.path);
  await ensureParentsExistWithoutLinks(workspace, source);
  const found = await lstat(source).catch(() => null);
  if (found === null || found.isSymbolicLink()) return false;
  const stored = cacheLocation(dataDir, organization, cache.key);
  await mkdir(path.dirname(stored), { recursive: true });
  const suffix = randomBytes(6).toString('hex');
  const fresh = `${stored}.tmp-${suffix}`;
  const stale = `${stored}.old-${suffix}`;
  try {
    await cp(source, fresh, { recursive: true, verbatimSymlinks: true });
    await rename(stored, stale).catch(() => undefined);
    await rename(fresh, stored);
    return true;
  } finally {
    await rm(fresh, { recursive: true, force: true });
    await rm(stale, { recursive: true, force: true });
  }
}

/** Refuses a cache path reached through a link (the parents must be real directories). */
async function ensureParentsExistWithoutLinks(workspace: string, target: string): Promise<void> {
  let current = path.dirname(target);
  while (current !== workspace && current.startsWith(workspace)) {
    const stat = await lstat(current).catch(() => null);
    if (stat !== null && !stat.isDirectory()) throw new Error(`${path.relative(workspace, current)} is not a directory`);
    current = path.dirname(current);
  }
}
