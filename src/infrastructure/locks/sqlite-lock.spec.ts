import * as path from 'node:path';
import { holdExclusive, holdShared, LockBusy } from './sqlite-lock';
import { TempDirs } from '../../../test/support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

/** Across processes the e2e tests check it with real servers; inside one process it must hold too. */
describe('the SQLite file lock', () => {
  it('is shared by many holders, exclusive for one, and free again once released', () => {
    const file = path.join(dirs.make('assay-lock-'), 'test.lock');
    const [first, second] = [holdShared(file), holdShared(file)];
    expect(() => holdExclusive(file)).toThrow(LockBusy);
    first.release();
    expect(() => holdExclusive(file)).toThrow(LockBusy);
    second.release();
    const alone = holdExclusive(file);
    expect(() => holdShared(file)).toThrow(LockBusy);
    alone.release();
    holdShared(file).release();
  });
});
