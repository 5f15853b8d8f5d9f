import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DuplicateKey } from '../read-store.port';
import { MemoryReadStore } from './memory-read-store';
import { readSnapshot, UnusableSnapshot, writeSnapshot } from './read-model-snapshot';
import { tempDir } from '../../../../test/support/temp-dirs';

const origin = { position: 42, eventId: 'ev_42', fingerprint: 'f1' };
const PERMISSIONS = ['evals:read', 'environment:write', 'connectors:write', 'prompts:read'];

/** Documents of several shapes, with repeated strings, nested values, an odd key and more than one line's worth. */
function documents(): Array<Record<string, unknown> & { _id: string }> {
  const many = Array.from({ length: 1234 }, (_, i) => ({
    _id: `key_${String(i).padStart(6, '0')}`,
    organization: `organization-number-${i % 7}`,
    permissions: PERMISSIONS.filter((_, p) => (i + p) % 3 !== 0),
    name: `name ${i} ünïcode ✓ "quoted" \n newline`,
    ...(i % 5 === 0 ? { revokedAt: null, extra: { nested: [1, 'two', { three: 3 }] } } : { revokedAt: '2025-01-01T00:00:00.000Z' }),
    _position: i,
  }));
  const odd = JSON.parse('{"_id":"odd","__proto__":{"polluted":true},"tags":[],"empty":""}') as Record<string, unknown> & { _id: string };
  return [...many, odd];
}

async function written(dir: string): Promise<string> {
  const file = path.join(dir, 'read-models.snapshot');
  await writeSnapshot(file, origin, [
    { name: 'keys', documents: documents(), uniqueIndexes: ['name_1'] },
    { name: 'empty', documents: [], uniqueIndexes: [] },
  ]);
  return file;
}

/** Rewrites the file's body with `change` and a trailer that matches it: damage the checksum cannot see. */
function rewrite(file: string, change: (lines: string[]) => string[]): void {
  const lines = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  const body = change(lines.slice(0, -1))
    .map((line) => `${line}\n`)
    .join('');
  fs.writeFileSync(file, `${body}${JSON.stringify({ end: true, sha256: createHash('sha256').update(body).digest('hex') })}\n`);
}

describe('read-model snapshot file', () => {
  it('gives back every document as it was written, in order, with its key order, and the unique indexes it satisfied', async () => {
    const file = await written(tempDir());
    const loaded = await readSnapshot(file, origin.fingerprint);
    expect(loaded).toMatchObject({ ...origin, bytes: fs.statSync(file).size });
    const [keys, empty] = loaded?.collections ?? [];
    expect(empty).toEqual({ name: 'empty', documents: [], uniqueIndexes: [] });
    expect(keys.uniqueIndexes).toEqual(['name_1']);
    expect(JSON.stringify(keys.documents)).toBe(JSON.stringify(documents()));
    // A key named __proto__ is an own field, as JSON.parse makes it, never the prototype.
    const odd = keys.documents.at(-1) as Record<string, unknown>;
    expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
    expect(Object.keys(odd)).toEqual(['_id', '__proto__', 'tags', 'empty']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('writes a repeated string, alone or in a list, once per line', async () => {
    const file = await written(tempDir());
    const line = fs.readFileSync(file, 'utf8').split('\n')[1];
    expect(line.split('organization-number-3').length - 1).toBe(1);
    expect(line.split('"environment:write"').length - 1).toBe(1);
  });

  it('leaves out keys holding undefined, as the store reads them', async () => {
    const file = path.join(tempDir(), 'read-models.snapshot');
    await writeSnapshot(file, origin, [{ name: 'c', documents: [{ _id: 'a', gone: undefined, kept: 1 }] }]);
    expect((await readSnapshot(file, origin.fingerprint))?.collections[0].documents).toEqual([{ _id: 'a', kept: 1 }]);
  });

  it('is absent (null), or unusable when damaged, cut short, of another release or version, or inconsistent', async () => {
    const dir = tempDir();
    expect(await readSnapshot(path.join(dir, 'none'), origin.fingerprint)).toBeNull();
    const reason = async (file: string, fingerprint = origin.fingerprint) => {
      const error = await readSnapshot(file, fingerprint).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UnusableSnapshot);
      return (error as Error).message;
    };
    const file = await written(dir);
    expect(await reason(file, 'f2')).toBe('built by other projections (another release)');

    const content = fs.readFileSync(file);
    const damaged = Buffer.from(content);
    damaged[Math.floor(damaged.length / 2)] ^= 0x01;
    fs.writeFileSync(file, damaged);
    expect(await reason(file)).toBe('damaged: its checksum does not match');

    fs.writeFileSync(file, content.subarray(0, content.length - 40));
    expect(await reason(file)).toBe('incomplete: it has no trailer');

    fs.writeFileSync(file, content);
    rewrite(file, (lines) => [lines[0].replace('"version":2', '"version":1'), ...lines.slice(1)]);
    expect(await reason(file)).toBe('format version 1, this release reads 2');

    fs.writeFileSync(file, content);
    rewrite(file, (lines) => lines.slice(0, -1));
    expect(await reason(file)).toMatch(/^collection keys holds \d+ documents, 1235 expected$/);

    fs.writeFileSync(file, content);
    rewrite(file, (lines) => [lines[0], lines[1].replace(/"t":\[[^\]]*\]/, '"t":[]'), ...lines.slice(2)]);
    expect(await reason(file)).toBe('line 2 refers to a string it does not hold');
  });

  it('restores into a store whose unique index is read in by the first write, which it then holds to', async () => {
    const store = new MemoryReadStore();
    store.restore([
      {
        name: 'users',
        documents: [
          { _id: 'u1', email: 'a@x' },
          { _id: 'u2', email: 'b@x' },
        ],
        uniqueIndexes: ['email_1'],
      },
    ]);
    await store.ensureIndexes('users', [{ keys: { email: 1 }, unique: true }]);
    const users = store.collection('users');
    await expect(users.insertOne({ _id: 'u3', email: 'a@x' })).rejects.toBeInstanceOf(DuplicateKey);
    await expect(users.replaceOne({ _id: 'u2' }, { _id: 'u2', email: 'a@x' })).rejects.toBeInstanceOf(DuplicateKey);
    await users.replaceOne({ _id: 'u1' }, { _id: 'u1', email: 'c@x' });
    await users.insertOne({ _id: 'u3', email: 'a@x' });
    expect(await users.find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 'u1', email: 'c@x' },
      { _id: 'u2', email: 'b@x' },
      { _id: 'u3', email: 'a@x' },
    ]);
  });

  it('builds a unique index at once over restored documents that did not satisfy it when captured', async () => {
    const store = new MemoryReadStore();
    store.restore([
      {
        name: 'users',
        documents: [
          { _id: 'u1', email: 'a@x' },
          { _id: 'u2', email: 'a@x' },
        ],
      },
    ]);
    await expect(store.ensureIndexes('users', [{ keys: { email: 1 }, unique: true }])).rejects.toBeInstanceOf(DuplicateKey);
  });
});
