import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { CacheSpec } from '#shared/eval-definitions';
import { guardedCloneEnv } from './clone-guard';
import { localRepository } from './local-repository';
import type { HarnessPlan } from './harness/harness-driver';
import { shellQuote } from './harness/harness-driver';
import type { StepResult, TrialSession } from './trial-session';
import { TrialVoid } from './trial-verdict';
import { restoreCache, saveCache } from './workspace/cache';
import { handOverWritten } from './workspace/trial-directory';
import { WorkspacePathError, workspacePath, writeWorkspaceFile } from './workspace/workspace-paths';

/**
 * Set-up, before the agent's turn: the source, the cache, the profile's files, the harness's and
 * the profile's install, then the cache is saved (set-up succeeded). The profile's files are
 * written before the installs so that an install can use them (an .npmrc, a lock file).
 */
export async function setUpWorkspace(session: TrialSession, plan: HarnessPlan, env: Record<string, string>): Promise<void> {
  const { workspace } = session.directory;
  const files = await materializeSource(session);
  const cache = session.spec.cache;
  const trees = cache !== null && (await restore(session, cache)) ? [workspacePath(workspace, cache.path)] : [];
  files.push(...(await writeFiles(workspace, session.spec.profile?.files ?? {}, 'profile')));
  // Written by the service: given to the trial's user before anything of the trial runs again.
  await handOverWritten(workspace, { files, trees }, session.sandbox.user);
  if (plan.install !== null) await install(session, plan.install, env, 'harness install', 'harness');
  const profileInstall = session.spec.profile?.install;
  if (profileInstall !== undefined && profileInstall.trim() !== '') await install(session, profileInstall, env, 'install', 'install');
  if (cache !== null) await save(session, cache);
}

/** The source in the workspace; answers the files the service wrote (a clone is the trial user's own doing). */
async function materializeSource(session: TrialSession): Promise<string[]> {
  const source = session.spec.source;
  if (source.kind === 'files') return writeFiles(session.directory.workspace, source.files, 'source');
  if (source.kind === 'repo') await cloneRepository(session, source.url, source.ref);
  return [];
}

/** Beyond this many files of a source or a profile, the rest are written through the thread pool (file-calls.ts). */
const SYNC_WRITTEN_FILES = 32;

/** Writes the files; answers their absolute paths. */
async function writeFiles(workspace: string, files: Record<string, string>, field: 'source' | 'profile'): Promise<string[]> {
  const written: string[] = [];
  for (const [relative, content] of Object.entries(files)) {
    try {
      await writeWorkspaceFile(workspace, relative, content, written.length >= SYNC_WRITTEN_FILES);
      written.push(workspacePath(workspace, relative));
    } catch (error) {
      if (!(error instanceof WorkspacePathError)) throw error;
      throw new TrialVoid(`cannot write ${field} file: ${error.message}`, [field]);
    }
  }
  return written;
}

/**
 * `git clone` then `git checkout <ref>` (a branch, a tag or a commit), both in the sandbox: the
 * URL is the case's, so the clone must not read what the sandbox hides (a `file://` URL into the
 * data directory). It may use the network and read the host's /tmp, where other trials'
 * directories stay hidden, and a local repository bound read-only (local-repository.ts). A clone
 * that fails is the case's fault, not the service's.
 */
async function cloneRepository(session: TrialSession, url: string, ref: string | null): Promise<void> {
  if (url.startsWith('-') || ref?.startsWith('-')) throw new TrialVoid('the repository url and ref must not start with "-"', ['source']);
  const { config, lookupHost, runsOn } = session.settings;
  const pinned = await guardedCloneEnv(url, config.repositories, lookupHost, runsOn);
  const env = { ...session.baseEnv(), GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_GLOBAL: await cloneConfig(session), ...pinned };
  const timeoutMs = session.settings.cloneTimeoutMs;
  const shown = withoutCredentials(url);
  const local = await localRepository(session, url, shown);
  const clone = await session.step(`git clone --quiet -- ${shellQuote(local ?? url)} .`, {
    env,
    timeoutMs,
    display: `git clone --quiet -- ${shellQuote(shown)} .`,
    cloneAccess: true,
    readOnlyPaths: local === null ? [] : [local],
  });
  if (clone.timedOut) throw new TrialVoid(`git clone of ${shown} timed out after ${timeoutMs} ms`, ['source']);
  if (clone.limit !== null) throw new TrialVoid(`git clone of ${shown} hit a limit: ${clone.limit.reason}`, ['source']);
  if (clone.status !== 0) throw new TrialVoid(`git clone of ${shown} failed: ${lastLine(clone)}`, ['source']);
  if (ref === null) return;
  const checkout = await session.step(`git checkout --quiet ${shellQuote(ref)}`, { env, timeoutMs });
  if (checkout.timedOut) throw new TrialVoid(`git checkout of ${ref} timed out after ${timeoutMs} ms`, ['source']);
  if (checkout.status !== 0) throw new TrialVoid(`git checkout of ${ref} in ${shown} failed: ${lastLine(checkout)}`, ['source']);
}

/**
 * The clone's git configuration, beside (not in) the trial's home. The clone runs as the trial's
 * own user, so a repository on the host belongs to someone else, which git refuses ("dubious
 * ownership") to protect that user from the repository's config; git reads that exception only
 * from a global file. The clone runs in the sandbox as nobody of the host: nothing to protect.
 */
async function cloneConfig(session: TrialSession): Promise<string> {
  const file = path.join(session.directory.root, 'clone.gitconfig');
  await writeFile(file, '[safe]\n\tdirectory = *\n', { mode: 0o644 });
  return file;
}

/** The URL with any user:password part masked, as the trajectory and failures show it. */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]+@/i, '$1[redacted]@');
}

/** The credentials inside a URL, to be redacted wherever they might be echoed. */
export function urlCredentials(url: string): string[] {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/@]+)@/i.exec(url);
  return match === null ? [] : [match[1], ...match[1].split(':')];
}

async function install(session: TrialSession, command: string, env: Record<string, string>, label: string, field: string): Promise<void> {
  const timeoutMs = session.settings.installTimeoutMs;
  const result = await session.step(command, { env, timeoutMs });
  if (result.timedOut) throw new TrialVoid(`${label} timed out after ${timeoutMs} ms`, [field]);
  if (result.limit !== null) throw new TrialVoid(`${label} hit a limit: ${result.limit.reason}`, [field]);
  if (result.status !== 0) throw new TrialVoid(`${label} failed with exit code ${result.status}`, [field]);
}

/** True when the cache was restored (a hit). */
async function restore(session: TrialSession, cache: CacheSpec): Promise<boolean> {
  const { dataDir } = session.settings;
  try {
    return await restoreCache(dataDir, session.spec.organization, cache, session.directory.workspace);
  } catch (error) {
    if (error instanceof WorkspacePathError) throw new TrialVoid(`cannot restore the cache: ${error.message}`, ['cache']);
    throw error;
  }
}

/** A cache that cannot be saved costs the next trial time, not this trial its verdict. */
async function save(session: TrialSession, cache: CacheSpec): Promise<void> {
  try {
    await saveCache(session.settings.dataDir, session.spec.organization, cache, session.directory.workspace);
  } catch (error) {
    session.settings.logger?.warn('trial cache not saved', { trialId: session.spec.trialId, reason: (error as Error).message });
  }
}

function lastLine(result: StepResult): string {
  const lines = result.output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return lines.length === 0 ? `exit code ${result.status}` : lines[lines.length - 1];
}
