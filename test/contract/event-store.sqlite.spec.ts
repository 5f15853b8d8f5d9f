import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { eventStoreContract } from './event-store.contract';
import { NewEvent, RecordedEvent, WrongExpectedVersion } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore, SqliteEventStoreOptions } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { eventHash } from '#shared/event-chain';
import { tempDir } from '../support/temp-dirs';

/** Child processes load the compiled adapter: `npm test` builds dist/ before running jest. */
const COMPILED_ADAPTER = path.resolve(__dirname, '../../dist/infrastructure/event-store/sqlite/sqlite-event-store.js');
const compiledAdapterExists = fs.existsSync(COMPILED_ADAPTER);
if (!compiledAdapterExists) {
  console.warn(`SQLite child-process tests skipped: ${COMPILED_ADAPTER} is missing; run \`npm run build\` first.`);
}
const itWithChildProcess = compiledAdapterExists ? it : it.skip;

/** Appends one event at a time to STREAM and prints "<revision> <id>" once each append is acknowledged. */
const CHILD_APPENDER = `
const { randomUUID } = require('node:crypto');
const { SqliteEventStore } = require(process.env.ADAPTER);
const metadata = { organization: 'org-child', actor: 'system:child', correlationId: 'c', causationId: 'c' };
(async () => {
  const store = new SqliteEventStore(process.env.FILE);
  const count = process.env.COUNT ? Number(process.env.COUNT) : Infinity;
  for (let revision = 0; revision < count; revision++) {
    const id = randomUUID();
    const expected = revision === 0 ? 'no_stream' : revision - 1;
    await store.append(process.env.STREAM, [{ id, type: 'ChildAppended', data: { revision }, metadata }], expected);
    process.stdout.write(revision + ' ' + id + '\\n');
  }
  await store.close();
})().catch((error) => { console.error(error); process.exit(1); });
`;

/**
 * Appends in rounds of ten at once (ten streams, one event each), plus one refused append per
 * round (a revision the stream never had), and prints "<stream> <id>" as each is acknowledged.
 */
const CHILD_GROUP_APPENDER = `
const { randomUUID } = require('node:crypto');
const { SqliteEventStore } = require(process.env.ADAPTER);
const metadata = { organization: 'org-child', actor: 'system:child', correlationId: 'c', causationId: 'c' };
(async () => {
  const store = new SqliteEventStore(process.env.FILE);
  for (let round = 0; ; round++) {
    const appends = Array.from({ length: 10 }, (_, index) => {
      const stream = process.env.STREAM + '-' + round + '-' + index;
      const id = randomUUID();
      return store.append(stream, [{ id, type: 'ChildAppended', data: { round, index }, metadata }], 'no_stream').then(() => process.stdout.write(stream + ' ' + id + '\\n'));
    });
    const refused = store.append(process.env.STREAM + '-refused', [{ id: randomUUID(), type: 'ChildAppended', data: {}, metadata }], 41).then(
      () => process.stdout.write('refused-was-stored\\n'),
      () => undefined,
    );
    await Promise.all([...appends, refused]);
  }
})().catch((error) => { console.error(error); process.exit(1); });
`;

function temporaryFile(): { file: string; remove: () => void } {
  const directory = tempDir('assay-event-store-');
  return {
    file: path.join(directory, 'events.sqlite'),
    remove: () => fs.rmSync(directory, { recursive: true, force: true }),
  };
}

function spawnAppender(file: string, stream: string, count?: number) {
  const env = { ...process.env, ADAPTER: COMPILED_ADAPTER, FILE: file, STREAM: stream, COUNT: count?.toString() ?? '' };
  return spawn(process.execPath, ['-e', CHILD_APPENDER], { env, stdio: ['ignore', 'pipe', 'inherit'] });
}

function sampleEvent(): NewEvent {
  return {
    id: randomUUID(),
    type: 'SampleRecorded',
    data: {},
    metadata: { organization: 'org', actor: 'system:test', correlationId: 'c', causationId: 'c' },
  };
}

async function receiveFrom(events: AsyncIterator<RecordedEvent>, stream: string, count: number) {
  const received: RecordedEvent[] = [];
  while (received.length < count) {
    const next = await events.next();
    if (next.done) break;
    if (next.value.streamName === stream) received.push(next.value);
  }
  return received;
}

eventStoreContract('SQLite', async () => {
  const storage = temporaryFile();
  const store = new SqliteEventStore(storage.file);
  return {
    store,
    reopen: async () => new SqliteEventStore(storage.file),
    cleanup: async () => {
      await store.close();
      storage.remove();
    },
  };
});

describe('SqliteEventStore', () => {
  let storage: ReturnType<typeof temporaryFile>;
  const stores: SqliteEventStore[] = [];
  const open = (options?: SqliteEventStoreOptions) => {
    const store = new SqliteEventStore(storage.file, options);
    stores.push(store);
    return store;
  };

  beforeEach(() => {
    storage = temporaryFile();
  });

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    storage.remove();
  });

  it('keeps the log in WAL mode', () => {
    open();
    const raw = new Database(storage.file, { readonly: true });
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      raw.close();
    }
  });

  it('lets a subscription of one instance see appends made through another instance, by polling', async () => {
    const writer = open();
    const reader = open({ pollIntervalMs: 20 });
    const stream = `polled-${randomUUID()}`;
    const receiving = receiveFrom(reader.subscribeToAll()[Symbol.asyncIterator](), stream, 2);
    await writer.append(stream, [sampleEvent(), sampleEvent()], 'no_stream');
    const received = await receiving;
    expect(received.map((event) => event.revision)).toEqual([0, 1]);
  });

  it('wakes a subscription at once on an append through the same instance, without waiting to poll', async () => {
    const store = open({ pollIntervalMs: 600_000 });
    const stream = `woken-${randomUUID()}`;
    const receiving = receiveFrom(store.subscribeToAll()[Symbol.asyncIterator](), stream, 1);
    await new Promise((resolve) => setTimeout(resolve, 20)); // let it go idle first
    await store.append(stream, [sampleEvent()], 'no_stream');
    // The poll would come only after ten minutes, past the test's timeout: delivery proves the wake-up.
    expect(await receiving).toHaveLength(1);
  });

  it('gives each subscription woken by one append the same events, each its own copy', async () => {
    const store = open({ pollIntervalMs: 600_000 });
    const stream = `shared-${randomUUID()}`;
    const first = receiveFrom(store.subscribeToAll()[Symbol.asyncIterator](), stream, 2);
    const second = receiveFrom(store.subscribeToAll()[Symbol.asyncIterator](), stream, 2);
    await new Promise((resolve) => setTimeout(resolve, 20)); // both idle, at the same place
    await store.append(
      stream,
      [
        { ...sampleEvent(), data: { step: 1 } },
        { ...sampleEvent(), data: { step: 2 } },
      ],
      'no_stream',
    );
    const [one, two] = await Promise.all([first, second]);
    expect(one.map((event) => event.data)).toEqual([{ step: 1 }, { step: 2 }]);
    expect(two.map((event) => [event.id, event.position])).toEqual(one.map((event) => [event.id, event.position]));
    (one[0].data as { step: number }).step = 99;
    expect(two[0].data).toEqual({ step: 1 });
    // After both read the page, the next append is read afresh (the page read before it is stale).
    const more = receiveFrom(store.subscribeToAll({ after: one[1].position })[Symbol.asyncIterator](), stream, 1);
    await store.append(stream, [{ ...sampleEvent(), data: { step: 3 } }], 1);
    expect((await more).map((event) => event.data)).toEqual([{ step: 3 }]);
  });

  it('ends its subscriptions at once when the store is closed', async () => {
    const store = open({ pollIntervalMs: 60_000 });
    const pending = store.subscribeToAll()[Symbol.asyncIterator]().next();
    await store.close();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  itWithChildProcess('delivers events appended by another process to a live subscription', async () => {
    const store = open();
    const events = store.subscribeToAll()[Symbol.asyncIterator]();
    const stream = `child-${randomUUID()}`;
    const child = spawnAppender(storage.file, stream, 3);
    const exitCode = new Promise((resolve) => child.on('exit', resolve));
    const received = await receiveFrom(events, stream, 3);
    expect(received.map((event) => event.data)).toEqual([{ revision: 0 }, { revision: 1 }, { revision: 2 }]);
    expect(await exitCode).toBe(0);
  });

  itWithChildProcess('keeps every acknowledged append when the writer is killed with SIGKILL', async () => {
    const stream = `killed-${randomUUID()}`;
    const child = spawnAppender(storage.file, stream);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const acknowledged = new Map<number, string>();
    for await (const line of createInterface({ input: child.stdout })) {
      const [revision, id] = line.split(' ');
      acknowledged.set(Number(revision), id);
      if (acknowledged.size === 50) child.kill('SIGKILL');
    }
    await exited;
    expect(acknowledged.size).toBeGreaterThanOrEqual(50);
    const stored = await open().readStream(stream);
    for (const [revision, id] of acknowledged) expect(stored[revision]?.id).toBe(id);
  });

  it('commits appends made together as one group, each checked against the ones before it, each answered alone', async () => {
    const store = open();
    const stream = `group-${randomUUID()}`;
    const [first, second, refused, other] = [sampleEvent(), sampleEvent(), sampleEvent(), sampleEvent()];
    // One turn of the event loop: the second expects the revision the first makes within the same group.
    const outcomes = await Promise.allSettled([
      store.append(stream, [first], 'no_stream'),
      store.append(stream, [second], 0),
      store.append(stream, [refused], 0),
      store.append(`${stream}-other`, [other], 'no_stream'),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedVersion);
    const positions = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value.position] : []));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect((await store.readStream(stream)).map((event) => event.id)).toEqual([first.id, second.id]);
    // The same append again (a retry) answers what was stored, within a group too.
    expect(await Promise.all([store.append(stream, [first], 'no_stream'), store.append(`${stream}-other`, [other], 'no_stream')])).toEqual([
      { nextExpectedRevision: 0, position: positions[0] },
      { nextExpectedRevision: 0, position: positions[2] },
    ]);
  });

  it('answers appends only once the write-ahead file is synced, one sync at a time covering every group committed meanwhile', async () => {
    const syncs: Array<{ fd: number; done: () => void }> = [];
    const store = open({ syncFile: (fd) => new Promise<void>((done) => syncs.push({ fd, done })) });
    const settled: string[] = [];
    const append = (name: string, stream: string, expected: 'no_stream' | number) =>
      store.append(stream, [sampleEvent()], expected).then(() => settled.push(name));
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    const stream = `synced-${randomUUID()}`;
    const first = append('first', stream, 'no_stream');
    await turn();
    await turn();
    // Committed (readable) but not yet answered: its sync has not ended.
    expect(syncs).toHaveLength(1);
    expect(fs.fstatSync(syncs[0].fd).ino).toBe(fs.statSync(`${storage.file}-wal`).ino);
    expect(await store.readStream(stream)).toHaveLength(1);
    const second = append('second', stream, 0);
    await turn();
    const third = append('third', `${stream}-other`, 'no_stream');
    await turn();
    await turn();
    expect(await store.readStream(stream)).toHaveLength(2);
    expect(syncs).toHaveLength(1);
    expect(settled).toEqual([]);
    syncs[0].done();
    await first;
    await turn();
    expect(settled).toEqual(['first']);
    // One sync for the two groups committed while the first ran.
    expect(syncs).toHaveLength(2);
    syncs[1].done();
    await Promise.all([second, third]);
    expect(settled).toEqual(['first', 'second', 'third']);
  });

  it('refuses every append once a sync of the write-ahead file failed, saying to restart', async () => {
    const store = open({ syncFile: () => Promise.reject(new Error('EIO: i/o error, fsync')) });
    const stream = `unsynced-${randomUUID()}`;
    await expect(store.append(stream, [sampleEvent()], 'no_stream')).rejects.toThrow(
      /could not be synced to disk \(EIO: i\/o error, fsync\); restart the service/,
    );
    await expect(store.append(`${stream}-later`, [sampleEvent()], 'no_stream')).rejects.toThrow(/could not be synced to disk/);
    expect(await store.readStream(`${stream}-later`)).toEqual([]);
  });

  itWithChildProcess('keeps every acknowledged append of its group commits when the writer is killed with SIGKILL', async () => {
    const prefix = `grouped-${randomUUID()}`;
    const child = spawn(process.execPath, ['-e', CHILD_GROUP_APPENDER], {
      env: { ...process.env, ADAPTER: COMPILED_ADAPTER, FILE: storage.file, STREAM: prefix },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const acknowledged = new Map<string, string>();
    for await (const line of createInterface({ input: child.stdout })) {
      const [stream, id] = line.split(' ');
      acknowledged.set(stream, id);
      if (acknowledged.size === 200) child.kill('SIGKILL');
    }
    await exited;
    expect(acknowledged.has('refused-was-stored')).toBe(false);
    expect(acknowledged.size).toBeGreaterThanOrEqual(200);
    const reader = open();
    for (const [stream, id] of acknowledged) expect((await reader.readStream(stream)).map((event) => event.id)).toEqual([id]);
    expect(await reader.readStream(`${prefix}-refused`)).toEqual([]);
  });
});

describe('SqliteEventStore: the organization hash chain', () => {
  let storage: ReturnType<typeof temporaryFile>;
  beforeEach(() => {
    storage = temporaryFile();
  });
  afterEach(() => storage.remove());

  const metadata = { organization: 'acme', actor: 'system:test', correlationId: 'c', causationId: 'c' };

  it('links each event of an organization to the one before it, across streams, and recomputes from what is stored', async () => {
    const store = new SqliteEventStore(storage.file);
    try {
      await store.append(
        'a-1',
        [
          { ...sampleEvent(), metadata },
          { ...sampleEvent(), metadata },
        ],
        'no_stream',
      );
      await store.append('b-1', [{ ...sampleEvent(), metadata: { ...metadata, organization: 'globex' } }], 'no_stream');
      await store.append('b-2', [{ ...sampleEvent(), data: { nested: { z: 1, a: [1, 'x'] } }, metadata }], 'no_stream');
      const events = await store.readOrganization({ organization: 'acme', maxCount: 10 });
      expect(events.map((event) => event.chain?.prevHash ?? null)).toEqual([null, events[0].chain?.hash, events[1].chain?.hash]);
      for (const event of events) expect(eventHash(event, event.chain?.prevHash ?? null)).toBe(event.chain?.hash);
      const [globex] = await store.readOrganization({ organization: 'globex', maxCount: 10 });
      expect(globex.chain?.prevHash).toBeNull();
    } finally {
      await store.close();
    }
  });

  it('migrates a log written before the chain: old rows keep no hash, the chain starts at the next append', async () => {
    const old = new Database(storage.file);
    old.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, stream TEXT NOT NULL, revision INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, created_at TEXT NOT NULL, UNIQUE (stream, revision))`);
    old
      .prepare('INSERT INTO events (id, stream, revision, type, data, metadata, created_at) VALUES (?, ?, 0, ?, ?, ?, ?)')
      .run(randomUUID(), 'old-1', 'OldEvent', '{}', JSON.stringify(metadata), new Date().toISOString());
    old.close();
    const store = new SqliteEventStore(storage.file);
    try {
      await store.append('new-1', [{ ...sampleEvent(), metadata }], 'no_stream');
      const events = await store.readOrganization({ organization: 'acme', maxCount: 10 });
      expect(events.map((event) => [event.type, event.chain === null, event.chain?.prevHash ?? null])).toEqual([
        ['OldEvent', true, null],
        ['SampleRecorded', false, null],
      ]);
    } finally {
      await store.close();
    }
  });
});
