import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ApiClient } from './http-client';
import { tempDir, waitUntil } from './servers';

/** A start body with one case and one `command` variant; override any part. */
export function startBody(overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    suite: { id: 'greetings', prompt: 'Write {{word}} into out.txt' },
    cases: [{ id: 'say-hello', variables: { word: 'hello' }, verify: 'grep -q hello out.txt' }],
    variants: [{ harness: 'command', model: 'none', profile: { run: 'echo "$ASSAY_PROMPT" > prompt.txt; echo hello > out.txt' } }],
    trials: 1,
    ...overrides,
  };
}

/** Polls `evals.batches.get` until the batch is finished or failed. */
export async function waitForBatch(api: ApiClient, batchId: string, timeoutMs = 60000, intervalMs = 100): Promise<any> {
  let batch: any = null;
  await waitUntil(
    async () => {
      const answer = await api.call('evals.batches.get', { id: batchId });
      if (answer.status !== 200) throw new Error(`evals.batches.get answered ${answer.status}: ${answer.text}`);
      batch = answer.body;
      return batch.status !== 'running';
    },
    timeoutMs,
    intervalMs,
  );
  return batch;
}

/** A real git repository made on the fly: commit 1 tagged v1, then commit 2 on main. */
export function makeRepository(): { url: string; firstCommit: string } {
  return makeRepositoryIn(tempDir('assay-repo-'));
}

/** The same repository, made in `dir` (a directory the test removes). */
export function makeRepositoryIn(dir: string): { url: string; firstCommit: string } {
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
    }).trim();
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'version.txt'), 'one\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  git('tag', 'v1');
  const firstCommit = git('rev-parse', 'HEAD');
  fs.writeFileSync(path.join(dir, 'version.txt'), 'two\n');
  git('commit', '-q', '-am', 'second');
  // A trial's clone runs as its own unprivileged user: the repository must be world-readable.
  fs.chmodSync(dir, 0o755);
  return { url: dir, firstCommit };
}
