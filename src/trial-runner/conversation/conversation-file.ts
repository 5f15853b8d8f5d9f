import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { TrialUser } from '../sandbox/trial-user';
import { TrialFailed } from '../trial-verdict';
import { SYNC_CALLS } from '../workspace/file-calls';
import { handOver } from '../workspace/trial-directory';
import { WorkspacePathError, writeWorkspaceFile } from '../workspace/workspace-paths';

/** Where the conversation so far is kept for the agent, relative to the workspace. */
export const CONVERSATION_DIRECTORY = '.assay';
export const CONVERSATION_FILE = `${CONVERSATION_DIRECTORY}/conversation.jsonl`;
const GIT_EXCLUDE = '.git/info/exclude';

/**
 * Writes the conversation so far as JSON lines ({role, turn, text}) into the workspace, for the
 * agent to read (ASSAY_CONVERSATION). It is the service's file, not the agent's work: snapshots
 * skip it, and a git workspace ignores it so an agent's `git add -A` never commits it. The
 * service writes as itself into a workspace the trial controls, so no write goes through a link
 * the trial may have put in the way (workspace-paths.ts).
 */
export async function writeConversationFile(
  workspace: string,
  messages: ReadonlyArray<{ role: 'user' | 'agent'; turn: number; text: string }>,
  user: TrialUser | null,
): Promise<string> {
  try {
    await writeWorkspaceFile(workspace, CONVERSATION_FILE, messages.map((message) => `${JSON.stringify(message)}\n`).join(''));
  } catch (error) {
    if (!(error instanceof WorkspacePathError)) throw error;
    // Only the agent's own commands can have put something in its way.
    throw new TrialFailed(`the conversation file could not be written for the next turn: ${error.message}`);
  }
  if (messages.length === 1) {
    await handOver(path.join(workspace, CONVERSATION_DIRECTORY), user);
    await ignoreInGit(workspace);
  }
  return path.join(workspace, CONVERSATION_FILE);
}

/** Adds the directory to `.git/info/exclude` when that is a plain file of a plain `.git`: a convenience, never a reason to fail. */
async function ignoreInGit(workspace: string): Promise<void> {
  // Two or three lstats, answered at once (file-calls.ts): a workspace without git is the usual case.
  for (const relative of ['.git', '.git/info']) {
    const stat = SYNC_CALLS.lstat(path.join(workspace, relative));
    if (stat?.isDirectory() !== true) return;
  }
  const exclude = path.join(workspace, GIT_EXCLUDE);
  const stat = SYNC_CALLS.lstat(exclude);
  if (stat !== null && !stat.isFile()) return;
  const current = stat === null ? '' : await readFile(exclude, 'utf8');
  const line = `/${CONVERSATION_DIRECTORY}/`;
  if (current.split('\n').includes(line)) return;
  await writeWorkspaceFile(workspace, GIT_EXCLUDE, `${current}${current === '' || current.endsWith('\n') ? '' : '\n'}${line}\n`);
}
