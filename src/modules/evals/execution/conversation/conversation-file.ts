import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { TrialUser } from '../sandbox/trial-user';
import { handOver } from '../workspace/trial-directory';

/** Where the conversation so far is kept for the agent, relative to the workspace. */
export const CONVERSATION_DIRECTORY = '.assay';
export const CONVERSATION_FILE = `${CONVERSATION_DIRECTORY}/conversation.jsonl`;

/**
 * Writes the conversation so far as JSON lines ({role, turn, text}) into the workspace, for the
 * agent to read (ASSAY_CONVERSATION). It is the service's file, not the agent's work: snapshots
 * skip it, and a git workspace ignores it so an agent's `git add -A` never commits it.
 */
export async function writeConversationFile(
  workspace: string,
  messages: ReadonlyArray<{ role: 'user' | 'agent'; turn: number; text: string }>,
  user: TrialUser | null,
): Promise<string> {
  const directory = path.join(workspace, CONVERSATION_DIRECTORY);
  await mkdir(directory, { recursive: true });
  const file = path.join(workspace, CONVERSATION_FILE);
  await writeFile(file, messages.map((message) => `${JSON.stringify(message)}\n`).join(''), { mode: 0o644 });
  await handOver(directory, user);
  await ignoreInGit(workspace);
  return file;
}

async function ignoreInGit(workspace: string): Promise<void> {
  const exclude = path.join(workspace, '.git', 'info', 'exclude');
  const line = `/${CONVERSATION_DIRECTORY}/`;
  let current: string;
  try {
    current = await readFile(exclude, 'utf8');
  } catch (error) {
    // Not a git workspace (or one without info/): nothing to ignore it in.
    if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return;
    throw error;
  }
  if (current.split('\n').includes(line)) return;
  await appendFile(exclude, `${current === '' || current.endsWith('\n') ? '' : '\n'}${line}\n`);
}
