import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Redactor } from '../output/captured-output';
import type { TrialDiff, TrialDiffFile } from '../contract';
import type { KeptContents, Snapshot } from './snapshot';
import { textOf } from './artifacts';
import { findHostTool } from '../sandbox/host-tools';
import { sharedSpawnHelper } from '../sandbox/process-launcher';

/** The patch kept of a trial's change; beyond it the patch is cut (the file list stays whole). */
export const MAX_PATCH_BYTES = 1024 * 1024;
/** What the first snapshot keeps of each file (and in all) to show its change as a diff. */
export const KEPT_FILE_BYTES = 256 * 1024;
export const KEPT_TOTAL_BYTES = 8 * 1024 * 1024;
/** A text file larger than this is listed, not diffed. */
const DIFFED_FILE_BYTES = 1024 * 1024;

export function keptContents(): KeptContents {
  return { fileBytes: KEPT_FILE_BYTES, budgetBytes: KEPT_TOTAL_BYTES, byPath: new Map() };
}

/** A diff whose reads of the workspace are done: the patch is made from the service's own copies. */
export interface PendingDiff {
  diff: Promise<TrialDiff | null>;
}

/**
 * The agent's change to the workspace as a unified diff: text files added, modified or removed
 * (their content before from what the first snapshot kept), binary files named with their sizes,
 * paths the workspace's `.gitignore` files ignore left out. Redacted like output. Made with
 * `git diff --no-index` over two folders the service writes itself (regular files only, the
 * user's and the system's git configuration ignored); null when git cannot run.
 *
 * Answers once everything it needs of the workspace is read and copied: the patch is made from
 * the copies, so that verify may change the workspace while git runs (the trial waits for both).
 */
export async function workspaceDiff(workspace: string, before: Snapshot, after: Snapshot, kept: KeptContents, redactor: Redactor): Promise<PendingDiff> {
  const changed = changedRegularFiles(before, after);
  if (changed.length === 0) return { diff: Promise.resolve({ files: [], patch: '', truncated: false }) };
  const scratch = await mkdtemp(path.join(tmpdir(), 'assay-diff-'));
  const removeScratch = () => rm(scratch, { recursive: true, force: true });
  let files: TrialDiffFile[] | null;
  try {
    files = await copyChanges(scratch, workspace, after, changed, kept, redactor);
  } catch (error) {
    await removeScratch();
    throw error;
  }
  if (files === null) {
    await removeScratch();
    return { diff: Promise.resolve(null) };
  }
  return { diff: patchOf(scratch, files).finally(removeScratch) };
}

/** The changed files as the diff lists them, their text copied into `scratch/a` and `scratch/b`; null when git cannot run. */
async function copyChanges(
  scratch: string,
  workspace: string,
  after: Snapshot,
  changed: Array<Omit<TrialDiffFile, 'binary' | 'diffed'>>,
  kept: KeptContents,
  redactor: Redactor,
): Promise<TrialDiffFile[] | null> {
  // git is asked only when the workspace has .gitignore files.
  const hasIgnores = [...after.keys()].some((relative) => relative === '.gitignore' || relative.endsWith('/.gitignore'));
  const ignored = hasIgnores
    ? await ignoredPaths(
        scratch,
        workspace,
        changed.map((file) => file.path),
      )
    : new Set<string>();
  if (ignored === null) return null;
  const files: TrialDiffFile[] = [];
  for (const file of changed) {
    if (ignored.has(file.path)) continue;
    const old = file.change === 'added' ? Buffer.alloc(0) : (kept.byPath.get(file.path) ?? null);
    const now = file.change === 'deleted' ? Buffer.alloc(0) : await readFile(path.join(workspace, file.path)).catch(() => null);
    const binary = [old, now].some((content) => content !== null && textOf(content) === null);
    const diffable = old !== null && now !== null && !binary && old.length <= DIFFED_FILE_BYTES && now.length <= DIFFED_FILE_BYTES;
    files.push({ ...file, path: redactor.redact(file.path), binary, diffed: diffable });
    if (!diffable) continue;
    if (file.change !== 'added') await writeInto(path.join(scratch, 'a'), file.path, Buffer.from(redactor.redact(old.toString('utf8'))));
    if (file.change !== 'deleted') await writeInto(path.join(scratch, 'b'), file.path, Buffer.from(redactor.redact(now.toString('utf8'))));
  }
  return files;
}

async function patchOf(scratch: string, files: TrialDiffFile[]): Promise<TrialDiff | null> {
  const patch = files.some((file) => file.diffed) ? await gitDiff(scratch) : '';
  if (patch === null) return null;
  const bytes = Buffer.byteLength(patch);
  const truncated = bytes > MAX_PATCH_BYTES;
  return {
    files,
    patch: truncated ? `${Buffer.from(patch).subarray(0, MAX_PATCH_BYTES).toString('utf8')}\n[… ${bytes - MAX_PATCH_BYTES} bytes cut …]\n` : patch,
    truncated,
  };
}

function changedRegularFiles(before: Snapshot, after: Snapshot): Array<Omit<TrialDiffFile, 'binary' | 'diffed'>> {
  const files: Array<Omit<TrialDiffFile, 'binary' | 'diffed'>> = [];
  for (const [relative, entry] of after) {
    if (!entry.regular) continue;
    const previous = before.get(relative);
    if (previous?.sha256 === entry.sha256) continue;
    const change = previous === undefined || !previous.regular ? 'added' : 'modified';
    files.push({ path: relative, change, bytesBefore: change === 'added' ? null : (previous?.size ?? null), bytesAfter: entry.size });
  }
  for (const [relative, entry] of before) {
    if (entry.regular && !after.has(relative)) files.push({ path: relative, change: 'deleted', bytesBefore: entry.size, bytesAfter: null });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function writeInto(root: string, relative: string, content: Buffer): Promise<void> {
  const file = path.join(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

/** The most of git's output read; a patch of the kept contents is far smaller. */
const MAX_GIT_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * git with no configuration of the user's or the system's, and no attributes: nothing of the
 * host's decides how it diffs. Started by the spawn helper, as the trial's commands are: a
 * process forked from the server itself would hold its event loop for milliseconds.
 */
function git(args: string[], options: { cwd: string; input?: string }): Promise<{ code: number; stdout: string } | null> {
  const file = findHostTool('git');
  if (file === null) return Promise.resolve(null);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.cwd, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LANG: 'C.UTF-8' };
  const base = ['-c', 'safe.directory=*', '-c', 'core.attributesFile=/dev/null', '-c', 'core.quotePath=false', '-c', 'diff.noprefix=false'];
  return new Promise((resolve) => {
    const child = sharedSpawnHelper.launch({ file, args: [...base, ...args], cwd: options.cwd, env, stdin: options.input ?? null, fd3: false });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let code: number | null = null;
    child.on('data', (fd: number, chunk: Buffer) => {
      if (fd !== 1 || bytes > MAX_GIT_OUTPUT_BYTES) return;
      bytes += chunk.length;
      chunks.push(Buffer.from(chunk));
      if (bytes > MAX_GIT_OUTPUT_BYTES) child.destroyPipes();
    });
    child.once('exit', (exitCode: number | null) => (code = exitCode));
    child.once('spawnError', () => resolve(null));
    child.once('close', () => resolve(code === null || bytes > MAX_GIT_OUTPUT_BYTES ? null : { code, stdout: Buffer.concat(chunks).toString('utf8') }));
  });
}

/** The unified diff of `a/` against `b/` (exit 1 means they differ). */
async function gitDiff(scratch: string): Promise<string | null> {
  for (const side of ['a', 'b']) await mkdir(path.join(scratch, side), { recursive: true });
  // The folders are named a and b: with no prefixes of git's own, the paths read a/<path> and b/<path>.
  const result = await git(['diff', '--no-index', '--no-color', '--no-ext-diff', '--src-prefix=', '--dst-prefix=', '--', 'a', 'b'], { cwd: scratch });
  if (result === null || result.code > 1) return null;
  // A file on one side only is headed with that side's folder twice: the usual `a/<path> b/<path>` instead.
  return result.stdout.replace(/^diff --git [ab]\/(.*) [ab]\/(.*)$/gm, 'diff --git a/$1 b/$2');
}

/**
 * The paths the workspace's `.gitignore` files ignore, asked of git over an empty repository of
 * the service's whose work tree is the workspace (the workspace's own `.git`, if any, is not read).
 */
async function ignoredPaths(scratch: string, workspace: string, paths: string[]): Promise<Set<string> | null> {
  const gitDir = path.join(scratch, 'ignore.git');
  await mkdir(path.join(gitDir, 'objects'), { recursive: true });
  await mkdir(path.join(gitDir, 'refs'), { recursive: true });
  await writeFile(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(path.join(gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n');
  const result = await git([`--git-dir=${gitDir}`, `--work-tree=${workspace}`, 'check-ignore', '--no-index', '-z', '--stdin'], {
    cwd: scratch,
    input: paths.map((relative) => `${relative}\0`).join(''),
  });
  // 1: none of them is ignored.
  if (result === null || result.code > 1) return null;
  return new Set(result.stdout.split('\0').filter((entry) => entry !== ''));
}
