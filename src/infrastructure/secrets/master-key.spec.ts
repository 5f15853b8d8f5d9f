import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../config';
import { JsonLogger } from '../logging/json-logger';
import { generateMasterKey, masterKeyPath, withMasterKey } from './master-key';
import { TempDirs } from '../../../test/support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

describe('the master key file', () => {
  it('is generated in keys/ (0700) with mode 0600, and the log says ASSAY_MASTER_KEY is preferred', () => {
    const dataDir = dirs.make('assay-data-');
    const lines: string[] = [];
    const config = withMasterKey(loadConfig({ ASSAY_DATA_DIR: dataDir }), new JsonLogger('debug', (line) => lines.push(line)));
    expect(masterKeyPath(dataDir)).toBe(path.join(dataDir, 'keys', 'master.key'));
    expect(modeOf(path.join(dataDir, 'keys'))).toBe(0o700);
    expect(modeOf(masterKeyPath(dataDir))).toBe(0o600);
    expect(fs.existsSync(path.join(dataDir, 'master.key'))).toBe(false);
    expect(lines.join('\n')).toContain('ASSAY_MASTER_KEY is preferred');
    expect(lines.join('\n')).not.toContain(config.masterKey!.toString('base64'));
  });

  it("is moved from where older releases kept it, with a pending rotation's next key", () => {
    const dataDir = dirs.make('assay-data-');
    const [key, next] = [generateMasterKey(), generateMasterKey()];
    fs.writeFileSync(path.join(dataDir, 'master.key'), key.toString('base64') + '\n', { mode: 0o644 });
    fs.writeFileSync(path.join(dataDir, 'master.key.next'), next.toString('base64') + '\n', { mode: 0o600 });
    const config = withMasterKey(loadConfig({ ASSAY_DATA_DIR: dataDir }), new JsonLogger('silent'));
    expect(config.masterKey).toEqual(key);
    expect(fs.readdirSync(dataDir)).toEqual(['keys']);
    expect(fs.readdirSync(path.join(dataDir, 'keys')).sort()).toEqual(['master.key', 'master.key.next']);
    expect(modeOf(masterKeyPath(dataDir))).toBe(0o600);
  });
});
