import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ControlDirectories } from '#modules/evals/execution/workspace/control-directories';
import { describeWithBubblewrap } from '../support/bubblewrap';
import { BUBBLEWRAP, harnessStep, TempDirs, testRunner, trialSpec } from '../support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

/** A trial directory under the root, as the runner makes it before placing its control directory. */
function trialDir(root: string, name: string): string {
  const dir = path.join(root, name);
  mkdirSync(dir);
  return path.join(dir, '.session');
}

/** Control directories with one placed and held (a trial still running), so that spares are kept. */
function heldControls(): { root: string; controls: ControlDirectories } {
  const root = dirs.make('assay-controls-');
  const controls = new ControlDirectories(root);
  controls.place(trialDir(root, 'sbx_holder'));
  return { root, controls };
}

describe('ControlDirectories', () => {
  it('moves a finished trial’s control directory, emptied, into the next trial, and keeps no spare once none is held', () => {
    const root = dirs.make('assay-controls-');
    const controls = new ControlDirectories(root);
    const first = trialDir(root, 'sbx_a');
    const other = trialDir(root, 'sbx_b');
    controls.place(first);
    controls.place(other);
    writeFileSync(path.join(first, 'passwd'), 'first trial account\n');
    writeFileSync(path.join(first, 'step.in'), 'the first trial’s prompt');
    const inode = statSync(first).ino;

    controls.release(first);
    expect(controls.spareCount).toBe(1);
    const next = trialDir(root, 'sbx_c');
    controls.place(next);
    // The same directory (no new inode), with its files there but empty.
    expect(statSync(next).ino).toBe(inode);
    expect(readdirSync(next).sort()).toEqual(['passwd', 'step.in']);
    expect(readFileSync(path.join(next, 'step.in'), 'utf8')).toBe('');
    expect(readFileSync(path.join(next, 'passwd'), 'utf8')).toBe('');
    expect(controls.spareCount).toBe(0);

    controls.release(next);
    expect(readdirSync(root).filter((name) => name.startsWith('.control-'))).toHaveLength(1);
    controls.release(other);
    // No trial holds one: the spares are gone.
    expect(controls.spareCount).toBe(0);
    expect(readdirSync(root).sort()).toEqual(['sbx_a', 'sbx_b', 'sbx_c']);
  });

  it('does not keep a control directory holding anything but files, nor one it did not place, nor one twice', () => {
    const { root, controls } = heldControls();
    const odd = trialDir(root, 'sbx_odd');
    controls.place(odd);
    mkdirSync(path.join(odd, 'nested'));
    controls.release(odd);
    expect(controls.spareCount).toBe(0);
    expect(readdirSync(odd)).toEqual(['nested']);

    const foreign = trialDir(root, 'sbx_foreign');
    mkdirSync(foreign);
    controls.release(foreign);
    expect(controls.spareCount).toBe(0);

    const plain = trialDir(root, 'sbx_plain');
    controls.place(plain);
    controls.release(plain);
    controls.release(plain);
    expect(controls.spareCount).toBe(1);
  });

  it('makes a new directory when a spare has gone from under it', () => {
    const { root, controls } = heldControls();
    const first = trialDir(root, 'sbx_a');
    controls.place(first);
    controls.release(first);
    const spares = readdirSync(root).filter((entry) => entry.startsWith('.control-'));
    expect(spares).toHaveLength(1);
    rmSync(path.join(root, spares[0]), { recursive: true });
    const next = trialDir(root, 'sbx_b');
    controls.place(next);
    expect(statSync(next).isDirectory()).toBe(true);
    expect(readdirSync(next)).toEqual([]);
  });
});

/** Sessions and account files need a trial user of its own: a server run as root. */
const asRoot = process.getuid?.() === 0;
if (!asRoot)
  process.stderr.write('Skipping the runner part of control-directories.spec.ts: trials have users of their own only when the server runs as root\n');
const describeAsRoot = asRoot ? describeWithBubblewrap : describe.skip;

describeAsRoot('TrialRunner: control directories from trial to trial', () => {
  it('gives a later trial the control directory of a finished one, with nothing of that trial left in it', async () => {
    const trialsRoot = dirs.make('assay-trials-');
    const { runner } = testRunner(dirs, { trialsRoot });
    // A trial still running, so that the finished one's control directory is kept for the next.
    const holding = runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run: 'sleep 4' } }));
    const show =
      'stat -c %i ../.session; grep -c . ../.session/step.in || true; grep -c assay-trial ../.session/passwd; grep -F "$HOME" ../.session/passwd | cut -d: -f6';
    const first = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { run: show }, prompt: 'the first trial’s prompt' }));
    // Its first step (the install) is given no stdin: the file is as the first trial left it.
    const second = await runner.run(trialSpec({ sandbox: BUBBLEWRAP, profile: { install: `${show}; cat ../.session/step.in`, run: 'true' } }));
    await holding;
    const [firstInode, firstInput, firstAccounts, firstHome] = harnessStep(first, show).output.trim().split('\n');
    const secondOutput = harnessStep(second, `${show}; cat ../.session/step.in`).output;
    const [secondInode, secondInput, secondAccounts, secondHome] = secondOutput.trim().split('\n');
    expect(firstInput).toBe('1');
    expect(secondInode).toBe(firstInode);
    // Nothing of the first trial's prompt is there to read.
    expect(secondInput).toBe('0');
    expect(secondOutput).not.toContain('prompt');
    // Its own account, and only one: the first trial's is gone.
    expect([firstAccounts, secondAccounts]).toEqual(['1', '1']);
    expect(secondHome).toBe(path.join(trialsRoot, String(second.sandboxId), 'home'));
    expect(firstHome).toBe(path.join(trialsRoot, String(first.sandboxId), 'home'));
    // Idle again: no trial directory and no spare left.
    expect(readdirSync(trialsRoot)).toEqual([]);
  });
});
