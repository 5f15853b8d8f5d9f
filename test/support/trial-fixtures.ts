import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { tempDir } from './temp-dirs';
import { parseExecutionConfig } from '#trial-runner';
import { createTrialRunner, TrialRunnerOptions } from '#trial-runner';
import type { TrajectoryCommand, TrialOutcome, TrialRunner, TrialSpec } from '#trial-runner';
import { artifactPath } from '#trial-runner';

/** Temporary directories made by a test file, removed in afterAll. */
export class TempDirs {
  private readonly made: string[] = [];

  make(prefix = 'assay-test-'): string {
    const dir = tempDir(prefix);
    this.made.push(dir);
    return dir;
  }

  removeAll(): void {
    for (const dir of this.made.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** Config mapping sandbox_kind_1 to bubblewrap and sandbox_kind_2 to a plain process. */
export const TEST_SANDBOXES = { sandbox_kind_1: { driver: 'bubblewrap' }, sandbox_kind_2: { driver: 'process' } };
export const BUBBLEWRAP = 'sandbox_kind_1';
export const PROCESS = 'sandbox_kind_2';

/**
 * The operator's consent the tests run with (they map sandbox_kind_2 to a plain process, run
 * without bubblewrap on hosts that lack it, and clone `git init` repositories from local paths).
 * A test of a refusal sets these keys itself.
 */
export const TEST_CONSENT = { allowUnsandboxed: true, repositories: { allowLocal: true, allowPrivateHosts: true } };

export function testRunner(
  dirs: TempDirs,
  options: Partial<TrialRunnerOptions> & { rawConfig?: Record<string, unknown> } = {},
): { runner: TrialRunner; dataDir: string } {
  const dataDir = options.dataDir ?? dirs.make('assay-data-');
  const config = options.config ?? parseExecutionConfig({ ...TEST_CONSENT, ...(options.rawConfig ?? { sandboxes: TEST_SANDBOXES }) }, 'test config');
  // A root of the file's own, not the shared one in the system temporary directory, so nothing outlives the file.
  const trialsRoot = options.trialsRoot ?? dirs.make('assay-trials-');
  return { runner: createTrialRunner({ ...options, dataDir, config, trialsRoot }), dataDir };
}

let trialCounter = 0;

export function trialSpec(overrides: Partial<TrialSpec> = {}): TrialSpec {
  trialCounter += 1;
  return {
    trialId: `trl_test${trialCounter}`,
    organization: 'acme',
    prompt: 'Do the task.',
    source: { kind: 'empty' },
    cache: null,
    profile: { run: 'true' },
    harness: 'command',
    model: 'model-x',
    sandbox: null,
    timeoutMs: 30_000,
    verify: 'true',
    env: {},
    secrets: [],
    user: null,
    maxTurns: 8,
    variables: {},
    validator: null,
    prepare: null,
    providerKeys: {},
    ...overrides,
  };
}

/** The trajectory's command entries (not its messages), in order. */
export function commandsOf(outcome: TrialOutcome): TrajectoryCommand[] {
  return outcome.trajectory.filter((entry): entry is TrajectoryCommand => entry._tag === 'command');
}

/** The command entries whose command starts with `prefix`. */
export function stepsStarting(outcome: TrialOutcome, prefix: string): TrajectoryCommand[] {
  return commandsOf(outcome).filter((entry) => entry.command.startsWith(prefix));
}

/** The trajectory entry of the harness run (the command equal to `run`). */
export function harnessStep(outcome: TrialOutcome, run: string): TrajectoryCommand {
  const step = commandsOf(outcome).find((entry) => entry.command === run);
  if (step === undefined) throw new Error(`no trajectory entry for ${run}: ${JSON.stringify(outcome.trajectory)}`);
  return step;
}

export function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** A stored artifact's content, found by the path the agent wrote. */
export function artifactContent(dataDir: string, outcome: TrialOutcome, relative: string): string {
  const artifact = outcome.artifacts.find((entry) => entry.path === relative);
  if (artifact === undefined) throw new Error(`no artifact ${relative} in ${JSON.stringify(outcome.artifacts)}`);
  // A runner without a sealer (these tests' own) keeps the content unencrypted.
  return readFileSync(artifactPath(dataDir, 'acme', artifact.sha256), 'utf8');
}

/** A git repository with two commits; the first is tagged v1. */
export function gitRepoWithTwoCommits(dirs: TempDirs): { url: string; firstCommit: string } {
  const repo = dirs.make('assay-repo-');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=Test', ...args], { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(repo, 'version.txt'), 'first\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  git('tag', 'v1');
  const firstCommit = git('rev-parse', 'HEAD');
  writeFileSync(path.join(repo, 'version.txt'), 'second\n');
  writeFileSync(path.join(repo, 'added-later.txt'), 'later\n');
  git('add', '.');
  git('commit', '-q', '-m', 'second');
  // A trial's clone runs as its own unprivileged user: the repository must be world-readable.
  chmodSync(repo, 0o755);
  return { url: repo, firstCommit };
}
