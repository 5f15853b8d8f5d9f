import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { changedPaths, snapshotWorkspace } from './snapshot';
import { tempDir } from '../../../test/support/temp-dirs';

const sha256 = (content: string | Buffer) => createHash('sha256').update(content).digest('hex');

/**
 * Snapshots read a small workspace with synchronous calls and go on through the thread pool past
 * a budget (entries, bytes): both ways must describe the same workspace the same way, and neither
 * may open what is not a regular file.
 */
describe('workspace snapshots', () => {
  it('describes files, links and special files alike on both sides of the synchronous budget, and never opens a FIFO', async () => {
    const workspace = tempDir('assay-snapshot-');
    fs.mkdirSync(path.join(workspace, 'many'));
    // More entries than are read synchronously (256), and files on both sides of 64 KiB.
    for (let index = 0; index < 300; index += 1) fs.writeFileSync(path.join(workspace, 'many', `f${index}.txt`), `file ${index}\n`);
    const large = 'x'.repeat(200 * 1024);
    fs.writeFileSync(path.join(workspace, 'large.txt'), large);
    fs.writeFileSync(path.join(workspace, 'small.txt'), 'small\n');
    fs.symlinkSync('small.txt', path.join(workspace, 'link'));
    execFileSync('mkfifo', [path.join(workspace, 'pipe')]);
    fs.mkdirSync(path.join(workspace, '.git'));
    fs.writeFileSync(path.join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n');

    const before = await snapshotWorkspace(workspace);
    expect(before.size).toBe(300 + 4);
    expect(before.get('small.txt')).toMatchObject({ sha256: sha256('small\n'), regular: true, size: 6 });
    expect(before.get('large.txt')).toMatchObject({ sha256: sha256(large), regular: true, size: large.length });
    expect(before.get('many/f0.txt')?.sha256).toBe(sha256('file 0\n'));
    expect(before.get('many/f299.txt')?.sha256).toBe(sha256('file 299\n'));
    expect(before.get('link')).toMatchObject({ sha256: sha256('link:small.txt'), regular: false });
    expect(before.get('pipe')?.regular).toBe(false);
    expect(before.has('.git/HEAD')).toBe(false);

    fs.writeFileSync(path.join(workspace, 'many', 'f298.txt'), 'changed\n');
    fs.rmSync(path.join(workspace, 'small.txt'));
    const after = await snapshotWorkspace(workspace, before);
    expect(changedPaths(before, after)).toEqual(['many/f298.txt', 'small.txt']);
    // Unchanged entries keep their description (the stamp matched: not read again).
    expect(after.get('many/f1.txt')).toBe(before.get('many/f1.txt'));
  });
});
