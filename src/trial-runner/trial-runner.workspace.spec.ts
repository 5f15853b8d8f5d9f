import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { artifactPath } from './workspace/artifacts';
import { cacheLocation } from './workspace/cache';
import { itWithBubblewrap } from '../../test/support/bubblewrap';
import {
  BUBBLEWRAP,
  commandsOf,
  gitRepoWithTwoCommits,
  harnessStep,
  PROCESS,
  sha256,
  stepsStarting,
  TempDirs,
  testRunner,
  trialSpec,
} from '../../test/support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

describe('TrialRunner: workspace source', () => {
  it('materializes a files source, creating directories', async () => {
    const { runner } = testRunner(dirs);
    const files = { 'README.md': '# hi\n', 'src/lib/deep/util.ts': 'export const x = 1;\n' };
    const outcome = await runner.run(trialSpec({ source: { kind: 'files', files }, verify: 'grep -q "x = 1" src/lib/deep/util.ts && test -f README.md' }));
    expect(outcome.status).toBe('passed');
    expect(outcome.filesChanged).toEqual([]);
  });

  it('refuses a files source path that leaves the workspace', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ source: { kind: 'files', files: { '../escape.txt': 'x' } } }));
    expect(outcome).toMatchObject({ status: 'void', voidFields: ['source'], serviceFault: false });
    expect(outcome.failure).toContain('must stay inside the workspace');
  });

  const clonesAtTag = async (sandbox: string) => {
    const { url } = gitRepoWithTwoCommits(dirs);
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(
      trialSpec({ sandbox, source: { kind: 'repo', url, ref: 'v1' }, verify: 'grep -qx first version.txt && test ! -e added-later.txt' }),
    );
    expect(outcome).toMatchObject({ status: 'passed', failure: null });
    expect(stepsStarting(outcome, 'git ').map((entry) => [entry.command, entry.exitCode])).toEqual([
      [`git clone --quiet -- '${url}' .`, 0],
      ["git checkout --quiet 'v1'", 0],
    ]);
  };
  itWithBubblewrap(`clones a repo source at a tag (${BUBBLEWRAP}, bubblewrap)`, () => clonesAtTag(BUBBLEWRAP));
  it(`clones a repo source at a tag (${PROCESS}, process)`, () => clonesAtTag(PROCESS));

  it('clones the default branch when ref is null, and a commit when ref is a sha', async () => {
    const { url, firstCommit } = gitRepoWithTwoCommits(dirs);
    const { runner } = testRunner(dirs);
    const head = await runner.run(trialSpec({ source: { kind: 'repo', url, ref: null }, verify: 'grep -qx second version.txt' }));
    expect(head.status).toBe('passed');
    expect(stepsStarting(head, 'git checkout')).toEqual([]);
    const pinned = await runner.run(trialSpec({ source: { kind: 'repo', url, ref: firstCommit }, verify: 'grep -qx first version.txt' }));
    expect(pinned.status).toBe('passed');
  });

  it('voids the trial with a one-line failure when the repo cannot be cloned', async () => {
    const { runner } = testRunner(dirs);
    // A directory that is no repository: git itself says so.
    const notARepository = dirs.make('assay-not-a-repo-');
    const outcome = await runner.run(trialSpec({ source: { kind: 'repo', url: notARepository, ref: null } }));
    expect(outcome).toMatchObject({ status: 'void', voidFields: ['source'], serviceFault: false, exitCode: null });
    expect(outcome.failure).toMatch(new RegExp(`^git clone of ${notARepository} failed: fatal: .*does not exist`));
    expect(outcome.failure).not.toContain('\n');
    expect(outcome.trajectory).toHaveLength(1);
  });

  it('voids the trial before any git command when the local repository does not exist, naming the place', async () => {
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ source: { kind: 'repo', url: '/nonexistent/assay-repo.git', ref: null } }));
    expect(outcome).toMatchObject({ status: 'void', voidFields: ['source'], serviceFault: false, trajectory: [] });
    expect(outcome.failure).toBe('the repository /nonexistent/assay-repo.git does not exist on the server');
  });

  it('voids the trial when the ref does not exist', async () => {
    const { url } = gitRepoWithTwoCommits(dirs);
    const { runner } = testRunner(dirs);
    const outcome = await runner.run(trialSpec({ source: { kind: 'repo', url, ref: 'no-such-ref' } }));
    expect(outcome).toMatchObject({ status: 'void', voidFields: ['source'], serviceFault: false });
    expect(outcome.failure).toMatch(/^git checkout of no-such-ref in .* failed: /);
  });
});

describe('TrialRunner: changed files and artifacts', () => {
  it('lists what the agent added, changed and removed, and keeps added or changed content by sha256', async () => {
    const { runner, dataDir } = testRunner(dirs);
    const files = { 'keep.txt': 'same', 'change.txt': 'before', 'remove.txt': 'bye', 'sub/old.txt': 'old' };
    const run = [
      'printf after > change.txt',
      'rm remove.txt',
      'printf new > added.txt',
      ': > empty.txt',
      'mkdir -p deep/er && printf nested > deep/er/file.txt',
      'git init -q . && git add -A',
      'touch keep.txt',
    ].join(' && ');
    const outcome = await runner.run(trialSpec({ source: { kind: 'files', files }, profile: { run }, verify: 'echo verify-writes > verify.txt' }));
    expect(outcome.status).toBe('passed');
    expect(outcome.filesChanged).toEqual(['added.txt', 'change.txt', 'deep/er/file.txt', 'empty.txt', 'remove.txt']);
    expect(outcome.artifacts).toEqual([
      { path: 'added.txt', byteSize: 3, sha256: sha256('new') },
      { path: 'change.txt', byteSize: 5, sha256: sha256('after') },
      { path: 'deep/er/file.txt', byteSize: 6, sha256: sha256('nested') },
    ]);
    for (const artifact of outcome.artifacts) {
      const stored = readFileSync(artifactPath(dataDir, 'acme', artifact.sha256));
      expect(sha256(stored)).toBe(artifact.sha256);
    }
    expect(readdirSync(path.dirname(artifactPath(dataDir, 'acme', 'x'))).filter((name) => name.startsWith('.tmp'))).toEqual([]);
  });

  it('redacts secrets in text artifacts, keeps binary ones as they are, and records the size and hash of what is kept', async () => {
    const { runner, dataDir } = testRunner(dirs);
    const secret = 'artifact-secret-4f3e2d1c';
    const run = `printf 'key=%s\\n' "$TOKEN" > text.txt && printf 'bin\\000%s' "$TOKEN" > blob.bin && printf x > "named-$TOKEN.txt"`;
    const outcome = await runner.run(trialSpec({ env: { TOKEN: secret }, secrets: [secret], profile: { run }, verify: 'true' }));
    expect(outcome.status).toBe('passed');
    const blob = Buffer.concat([Buffer.from('bin\0'), Buffer.from(secret)]);
    expect(outcome.artifacts).toEqual([
      { path: 'blob.bin', byteSize: blob.length, sha256: sha256(blob) },
      { path: 'named-[redacted].txt', byteSize: 1, sha256: sha256('x') },
      { path: 'text.txt', byteSize: 15, sha256: sha256('key=[redacted]\n') },
    ]);
    expect(outcome.filesChanged).toEqual(['blob.bin', 'named-[redacted].txt', 'text.txt']);
    expect(readFileSync(artifactPath(dataDir, 'acme', sha256('key=[redacted]\n')), 'utf8')).toBe('key=[redacted]\n');
  });

  it('removes the trial directory after the trial', async () => {
    const trialsRoot = dirs.make('assay-trials-');
    const { runner } = testRunner(dirs, { trialsRoot });
    const outcome = await runner.run(trialSpec({ profile: { run: 'pwd' } }));
    const workspace = harnessStep(outcome, 'pwd').output.trim();
    expect(workspace.startsWith(trialsRoot)).toBe(true);
    expect(existsSync(workspace)).toBe(false);
    expect(readdirSync(trialsRoot)).toEqual([]);
  });

  it('removes links the trial left without following them, and a tree past the synchronous walk', async () => {
    const trialsRoot = dirs.make('assay-trials-');
    const outside = dirs.make('assay-outside-');
    writeFileSync(path.join(outside, 'keep.txt'), 'kept\n');
    const { runner } = testRunner(dirs, { trialsRoot });
    const links = `ln -s '${outside}' dir-link && ln -s '${outside}/keep.txt' file-link && ln -s missing dangling`;
    const small = await runner.run(trialSpec({ sandbox: PROCESS, profile: { run: `mkdir -p a/b/c && echo x > a/b/c/deep.txt && ${links}` } }));
    expect(small.status).toBe('passed');
    expect(readdirSync(trialsRoot)).toEqual([]);
    // More entries than are removed synchronously: the rest goes through the pool.
    const large = await runner.run(
      trialSpec({ sandbox: PROCESS, profile: { run: `mkdir -p many/sub && for i in $(seq 600); do : > many/f$i; done && ${links}` } }),
    );
    expect(large.status).toBe('passed');
    expect(readdirSync(trialsRoot)).toEqual([]);
    expect(readdirSync(outside)).toEqual(['keep.txt']);
    expect(readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('kept\n');
  });

  it('marks the trials root for ext4 to spread the trial directories over its block groups (chattr +T)', async () => {
    const probe = dirs.make('assay-topdir-probe-');
    const flagged = (dir: string) => execFileSync('lsattr', ['-d', dir], { encoding: 'utf8' }).split(' ')[0].includes('T');
    try {
      execFileSync('chattr', ['+T', probe], { stdio: 'pipe' });
    } catch (error) {
      process.stderr.write(`Skipping the chattr +T check: the temporary directory's file system or chattr cannot (${String(error).split('\n')[0]})\n`);
      return;
    }
    expect(flagged(probe)).toBe(true);
    // A root the runner is given, marked when the runner is made; one it makes itself, by the first trial.
    const given = dirs.make('assay-trials-');
    testRunner(dirs, { trialsRoot: given });
    expect(flagged(given)).toBe(true);
    const made = path.join(dirs.make('assay-trials-parent-'), 'trials');
    const { runner } = testRunner(dirs, { trialsRoot: made });
    expect(existsSync(made)).toBe(false);
    expect((await runner.run(trialSpec({ sandbox: PROCESS, profile: { run: 'true' } }))).status).toBe('passed');
    expect(flagged(made)).toBe(true);
  });

  it('hands the outcome over before removing the trial directory, and settles once it is gone', async () => {
    const trialsRoot = dirs.make('assay-trials-');
    const { runner } = testRunner(dirs, { trialsRoot });
    const handedOver: Array<{ status: string; directories: string[] }> = [];
    const outcome = await runner.run(trialSpec({ profile: { run: 'echo hi > made.txt' } }), undefined, (handed) =>
      handedOver.push({ status: handed.status, directories: readdirSync(trialsRoot) }),
    );
    // The caller could record the outcome while the trial's directory (and so its user) was still held.
    expect(handedOver).toEqual([{ status: 'passed', directories: [outcome.sandboxId] }]);
    expect(outcome.filesChanged).toEqual(['made.txt']);
    expect(readdirSync(trialsRoot)).toEqual([]);
  });
});

describe('TrialRunner: cache', () => {
  it('saves the cache after set-up and restores it in a later trial with the same key', async () => {
    const { runner, dataDir } = testRunner(dirs);
    const cache = { key: 'deps-v1', path: '.cache/deps' };
    const install = 'if [ -f .cache/deps/built.txt ]; then echo restored; else mkdir -p .cache/deps && echo built > .cache/deps/built.txt && echo fresh; fi';
    const profile = { install, run: 'echo by-agent > .cache/deps/agent.txt' };
    const first = await runner.run(trialSpec({ cache, profile }));
    expect(first.status).toBe('passed');
    expect(commandsOf(first)[0].output).toBe('fresh\n');
    const stored = cacheLocation(dataDir, 'acme', cache.key);
    expect(stored).toBe(path.join(dataDir, 'cache', 'acme', sha256(cache.key)));
    expect(readdirSync(stored)).toEqual(['built.txt']);

    const second = await runner.run(trialSpec({ cache, profile, verify: 'test -f .cache/deps/built.txt' }));
    expect(second.status).toBe('passed');
    expect(commandsOf(second)[0].output).toBe('restored\n');
    const otherOrganization = await runner.run(trialSpec({ cache, profile, organization: 'other-org' }));
    expect(commandsOf(otherOrganization)[0].output).toBe('fresh\n');
    const otherKey = await runner.run(trialSpec({ cache: { ...cache, key: 'deps-v2' }, profile }));
    expect(commandsOf(otherKey)[0].output).toBe('fresh\n');
  });

  it('does not follow a link planted at the cache path', async () => {
    const { runner, dataDir } = testRunner(dirs);
    const cache = { key: 'linked', path: 'data-link' };
    const outcome = await runner.run(trialSpec({ sandbox: PROCESS, cache, profile: { install: `ln -s ${dataDir} data-link`, run: 'true' } }));
    expect(outcome.status).toBe('passed');
    expect(existsSync(cacheLocation(dataDir, 'acme', cache.key))).toBe(false);
  });
});
