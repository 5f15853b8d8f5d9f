/**
 * The behaviour every EventStore adapter must show, as a jest suite. Each adapter's spec calls
 * `eventStoreContract` with a factory. Stream names are unique per test, so the suite also runs
 * against a shared EventStoreDB that already holds events from earlier runs.
 */
import { randomUUID } from 'node:crypto';
import { eventHash } from '#shared/event-chain';
import {
  AllSubscription,
  EventStore,
  ExpectedRevision,
  IdempotencyViolation,
  LIVENESS_METADATA_KEY,
  NewEvent,
  ReadStreamOptions,
  RecordedEvent,
  WrongExpectedVersion,
} from '#infrastructure/event-store/event-store.port';

export interface OpenedEventStore {
  store: EventStore;
  /** A second, independent store on the same storage (another process, in production). */
  reopen?: () => Promise<EventStore>;
  cleanup: () => Promise<void>;
}

const DELIVERY_TIMEOUT_MS = 10_000;
const ISO_UTC_WITH_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function uniqueStream(purpose: string): string {
  return `contract_${purpose}-${randomUUID().replace(/-/g, '')}`;
}

function newEvent(type = 'SampleRecorded', data: unknown = { at: Date.now() }): NewEvent {
  const correlationId = randomUUID();
  return {
    id: randomUUID(),
    type,
    data,
    metadata: { organization: 'org-contract', actor: 'system:contract', correlationId, causationId: correlationId },
  };
}

function newEvents(count: number): NewEvent[] {
  return Array.from({ length: count }, (_, index) => newEvent('SampleRecorded', { index }));
}

async function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}`)), DELIVERY_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a subscription until `count` events of `stream` arrived; returns everything it saw. */
async function receive(events: AsyncIterator<RecordedEvent>, stream: string, count: number): Promise<RecordedEvent[]> {
  const seen: RecordedEvent[] = [];
  const collect = async () => {
    while (seen.filter((event) => event.streamName === stream).length < count) {
      const next = await events.next();
      if (next.done) throw new Error('The subscription ended early');
      seen.push(next.value);
    }
    return seen;
  };
  return withTimeout(collect(), `${count} events of ${stream}`);
}

function ofStream(events: RecordedEvent[], stream: string): RecordedEvent[] {
  return events.filter((event) => event.streamName === stream);
}

function expectStrictlyIncreasing(positions: number[]): void {
  positions.slice(1).forEach((position, index) => expect(position).toBeGreaterThan(positions[index]));
}

async function expectWrongExpectedVersion(attempt: Promise<unknown>, actual: number): Promise<void> {
  const error = await attempt.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(WrongExpectedVersion);
  expect((error as WrongExpectedVersion).actual).toBe(actual);
}

/** What the specs share: the store under test, and subscriptions closed after each test. */
class Subject {
  opened!: OpenedEventStore;
  private readonly subscriptions: AllSubscription[] = [];

  get store(): EventStore {
    return this.opened.store;
  }

  subscribe(after?: number): AllSubscription {
    const subscription = this.store.subscribeToAll(after === undefined ? {} : { after });
    this.subscriptions.push(subscription);
    return subscription;
  }

  async closeSubscriptions(): Promise<void> {
    await Promise.all(this.subscriptions.splice(0).map((subscription) => subscription.close()));
  }
}

export function eventStoreContract(adapterName: string, open: () => Promise<OpenedEventStore>): void {
  describe(`EventStore contract: ${adapterName}`, () => {
    const subject = new Subject();
    beforeAll(async () => {
      subject.opened = await open();
    });
    afterEach(() => subject.closeSubscriptions());
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- `opened` is unset when open() failed in beforeAll
    afterAll(() => subject.opened?.cleanup());

    appendSpecs(subject);
    positionSpecs(subject);
    idempotencySpecs(subject);
    streamReadSpecs(subject);
    allReadSpecs(subject);
    subscriptionSpecs(subject);
    subscriptionClosingSpecs(subject);
    secondStoreSpecs(subject);
    organizationReadSpecs(subject);
  });
}

function appendSpecs(subject: Subject): void {
  describe('appending with an expected revision', () => {
    it('creates a stream with no_stream', async () => {
      const stream = uniqueStream('create');
      const result = await subject.store.append(stream, newEvents(2), 'no_stream');
      expect(result.nextExpectedRevision).toBe(1);
      expect(await subject.store.readStream(stream)).toHaveLength(2);
    });

    it('rejects no_stream on an existing stream with its actual revision', async () => {
      const stream = uniqueStream('exists');
      await subject.store.append(stream, newEvents(3), 'no_stream');
      await expectWrongExpectedVersion(subject.store.append(stream, newEvents(1), 'no_stream'), 2);
    });

    it('rejects stream_exists on an absent stream with -1', async () => {
      const stream = uniqueStream('absent');
      await expectWrongExpectedVersion(subject.store.append(stream, newEvents(1), 'stream_exists'), -1);
      expect(await subject.store.readStream(stream)).toEqual([]);
    });

    it('accepts stream_exists on an existing stream', async () => {
      const stream = uniqueStream('present');
      await subject.store.append(stream, newEvents(1), 'no_stream');
      expect((await subject.store.append(stream, newEvents(1), 'stream_exists')).nextExpectedRevision).toBe(1);
    });

    it('accepts the exact numeric revision and rejects one less or one more', async () => {
      const stream = uniqueStream('numeric');
      await subject.store.append(stream, newEvents(2), 'no_stream');
      await expectWrongExpectedVersion(subject.store.append(stream, newEvents(1), 0), 1);
      await expectWrongExpectedVersion(subject.store.append(stream, newEvents(1), 2), 1);
      expect((await subject.store.append(stream, newEvents(1), 1)).nextExpectedRevision).toBe(2);
      expect(await subject.store.readStream(stream)).toHaveLength(3);
    });

    it('rejects a numeric revision on an absent stream with -1', async () => {
      await expectWrongExpectedVersion(subject.store.append(uniqueStream('numeric_absent'), newEvents(1), 0), -1);
    });

    it('appends without a check with any, to new and existing streams', async () => {
      const stream = uniqueStream('any');
      expect((await subject.store.append(stream, newEvents(1), 'any')).nextExpectedRevision).toBe(0);
      expect((await subject.store.append(stream, newEvents(2), 'any')).nextExpectedRevision).toBe(2);
    });

    it('lets exactly one of several concurrent appends at the same revision succeed', async () => {
      const stream = uniqueStream('race');
      await subject.store.append(stream, newEvents(1), 'no_stream');
      const attempts = await Promise.allSettled(Array.from({ length: 10 }, () => subject.store.append(stream, newEvents(1), 0)));
      const rejected = attempts.filter((attempt) => attempt.status === 'rejected');
      expect(attempts.filter((attempt) => attempt.status === 'fulfilled')).toHaveLength(1);
      rejected.forEach((attempt) => expect(attempt.reason).toBeInstanceOf(WrongExpectedVersion));
      expect(await subject.store.readStream(stream)).toHaveLength(2);
    });
  });
}

function positionSpecs(subject: Subject): void {
  describe('revisions and positions', () => {
    it('numbers revisions from 0 without gaps across appends', async () => {
      const stream = uniqueStream('revisions');
      await subject.store.append(stream, newEvents(2), 'no_stream');
      await subject.store.append(stream, newEvents(3), 1);
      expect((await subject.store.readStream(stream)).map((event) => event.revision)).toEqual([0, 1, 2, 3, 4]);
    });

    it('gives strictly increasing positions across streams, and reports the last one', async () => {
      const first = uniqueStream('positions_a');
      const second = uniqueStream('positions_b');
      const head = await subject.store.headPosition();
      const results = [
        await subject.store.append(first, newEvents(2), 'no_stream'),
        await subject.store.append(second, newEvents(1), 'no_stream'),
        await subject.store.append(first, newEvents(1), 1),
      ];
      expectStrictlyIncreasing(results.map((result) => result.position));
      const all = await subject.store.readAll({ after: head });
      expectStrictlyIncreasing(all.map((event) => event.position));
      const stored = ofStream(all, first);
      expect(stored.map((event) => event.position)).toEqual([expect.any(Number), results[0].position, results[2].position]);
      expect(ofStream(all, second)[0].position).toBe(results[1].position);
    });

    it('reports the newest position as the head', async () => {
      const result = await subject.store.append(uniqueStream('head'), newEvents(2), 'no_stream');
      expect(await subject.store.headPosition()).toBe(result.position);
    });
  });
}

function idempotencySpecs(subject: Subject): void {
  describe('idempotent appends', () => {
    it('returns the original result for the same ids and appends nothing, even with a stale revision', async () => {
      const stream = uniqueStream('idempotent');
      const batch = newEvents(2);
      const original = await subject.store.append(stream, batch, 'no_stream');
      await subject.store.append(stream, newEvents(1), 1);
      expect(await subject.store.append(stream, batch, 'no_stream')).toEqual(original);
      expect(await subject.store.append(stream, batch, 'any')).toEqual(original);
      expect(await subject.store.append(stream, batch, 2)).toEqual(original);
      expect(await subject.store.append(stream, batch, 0)).toEqual(original);
      expect(await subject.store.readStream(stream)).toHaveLength(3);
    });

    it('returns the original result for a retried single-event append', async () => {
      const stream = uniqueStream('idempotent_single');
      await subject.store.append(stream, newEvents(1), 'no_stream');
      const retried = newEvent();
      const original = await subject.store.append(stream, [retried], 0);
      expect(await subject.store.append(stream, [retried], 0)).toEqual(original);
      expect(await subject.store.append(stream, [retried], 1)).toEqual(original);
      expect(await subject.store.readStream(stream)).toHaveLength(2);
    });

    it('a retried append with the same event ids beyond 200 later events is still idempotent', async () => {
      const stream = uniqueStream('idempotent_far');
      const batch = newEvents(2);
      const original = await subject.store.append(stream, batch, 'no_stream');
      let revision = original.nextExpectedRevision;
      for (let appended = 0; appended < 250; appended += 50) {
        revision = (await subject.store.append(stream, newEvents(50), revision)).nextExpectedRevision;
      }
      expect(await subject.store.append(stream, batch, 'no_stream')).toEqual(original);
      expect(await subject.store.append(stream, batch, 'any')).toEqual(original);
      expect(await subject.store.append(stream, batch, revision)).toEqual(original);
      await expect(subject.store.append(stream, [batch[1], newEvent()], revision)).rejects.toBeInstanceOf(IdempotencyViolation);
      expect(await subject.store.readStream(stream)).toHaveLength(252);
    });

    it('rejects a batch that repeats only some stored ids', async () => {
      const stream = uniqueStream('partial');
      const [first, second] = newEvents(2);
      await subject.store.append(stream, [first, second], 'no_stream');
      const partly = (repeated: NewEvent, expected: ExpectedRevision) => subject.store.append(stream, [repeated, newEvent()], expected);
      await expect(partly(first, 'any')).rejects.toBeInstanceOf(IdempotencyViolation);
      await expect(partly(second, 1)).rejects.toBeInstanceOf(IdempotencyViolation);
      expect(await subject.store.readStream(stream)).toHaveLength(2);
    });
  });
}

function streamReadSpecs(subject: Subject): void {
  describe('reading a stream', () => {
    it('reads an absent stream as an empty array', async () => {
      expect(await subject.store.readStream(uniqueStream('missing'))).toEqual([]);
      expect(await subject.store.readStream(uniqueStream('missing'), { direction: 'backwards' })).toEqual([]);
    });

    it('reads forwards and backwards from an inclusive revision, up to maxCount', async () => {
      const stream = uniqueStream('read_stream');
      const batch = newEvents(5);
      await subject.store.append(stream, batch, 'no_stream');
      const readIds = async (options?: ReadStreamOptions) => (await subject.store.readStream(stream, options)).map((event) => event.id);
      expect(await readIds()).toEqual(idsAt(batch, [0, 1, 2, 3, 4]));
      expect(await readIds({ fromRevision: 2 })).toEqual(idsAt(batch, [2, 3, 4]));
      expect(await readIds({ fromRevision: 1, maxCount: 2 })).toEqual(idsAt(batch, [1, 2]));
      expect(await readIds({ direction: 'backwards' })).toEqual(idsAt(batch, [4, 3, 2, 1, 0]));
      expect(await readIds({ direction: 'backwards', fromRevision: 3, maxCount: 2 })).toEqual(idsAt(batch, [3, 2]));
      expect(await subject.store.readStream(stream, { fromRevision: 5 })).toEqual([]);
    });

    it('round-trips data and metadata exactly and stamps createdAt in ISO-8601 UTC', async () => {
      const stream = uniqueStream('round_trip');
      const data = {
        title: 'Évaluation « naïve » 評価 🧪',
        nested: { scores: [0.25, 1, -3.5e-7], flags: { passed: true, flaky: false }, empty: {}, none: null },
        list: [{ a: 1 }, ['x', 'ÿ'], 'tab\tnew\nline "quoted" \\ back'],
      };
      const event = newEvent('DataRoundTripped', data);
      event.metadata = { ...event.metadata, actor: 'key_ünïcödé', trace: { spans: [1, 2], origin: 'cli' } };
      const before = Date.now();
      await subject.store.append(stream, [event], 'no_stream');
      const [stored] = await subject.store.readStream(stream);
      expect(stored).toMatchObject({ id: event.id, type: 'DataRoundTripped', streamName: stream, revision: 0 });
      expect(stored.data).toEqual(data);
      expect(stored.metadata).toEqual(event.metadata);
      expect(stored.createdAt).toMatch(ISO_UTC_WITH_MILLISECONDS);
      // A server's clock may differ from ours a little.
      expect(Math.abs(Date.parse(stored.createdAt) - before)).toBeLessThan(5 * 60_000);
    });
  });
}

function allReadSpecs(subject: Subject): void {
  describe('reading $all', () => {
    it('reads forwards strictly after a position, up to maxCount', async () => {
      const stream = uniqueStream('read_all');
      const first = await subject.store.append(stream, newEvents(1), 'no_stream');
      await subject.store.append(stream, newEvents(3), 0);
      const after = await subject.store.readAll({ after: first.position });
      expect(ofStream(after, stream).map((event) => event.revision)).toEqual([1, 2, 3]);
      after.forEach((event) => expect(event.position).toBeGreaterThan(first.position));
      const page = await subject.store.readAll({ after: first.position, maxCount: 2 });
      expect(page.map((event) => event.revision)).toEqual([1, 2]);
      expect(page.every((event) => event.streamName === stream)).toBe(true);
    });

    it('reads backwards from the end, and strictly before a position', async () => {
      const stream = uniqueStream('read_all_back');
      await subject.store.append(stream, newEvents(3), 'no_stream');
      const newest = await subject.store.readAll({ direction: 'backwards', maxCount: 3 });
      expect(newest.map((event) => [event.streamName, event.revision])).toEqual([
        [stream, 2],
        [stream, 1],
        [stream, 0],
      ]);
      const before = await subject.store.readAll({ direction: 'backwards', after: newest[0].position, maxCount: 2 });
      expect(before.map((event) => event.revision)).toEqual([1, 0]);
    });
  });
}

function subscriptionSpecs(subject: Subject): void {
  describe('subscribing to $all', () => {
    it('delivers the history, then events appended afterwards, in position order', async () => {
      const stream = uniqueStream('subscribe_history');
      await subject.store.append(stream, newEvents(2), 'no_stream');
      const events = subject.subscribe()[Symbol.asyncIterator]();
      const history = await receive(events, stream, 2);
      const receiving = receive(events, stream, 1); // already waiting when the append happens
      await subject.store.append(stream, newEvents(1), 1);
      const live = await receiving;
      expect(ofStream([...history, ...live], stream).map((event) => event.revision)).toEqual([0, 1, 2]);
      expectStrictlyIncreasing([...history, ...live].map((event) => event.position));
    });

    it('delivers only events after the given position', async () => {
      const stream = uniqueStream('subscribe_after');
      const first = await subject.store.append(stream, newEvents(1), 'no_stream');
      await subject.store.append(stream, newEvents(2), 0);
      const events = subject.subscribe(first.position)[Symbol.asyncIterator]();
      const received = await receive(events, stream, 2);
      expect(ofStream(received, stream).map((event) => event.revision)).toEqual([1, 2]);
      received.forEach((event) => expect(event.position).toBeGreaterThan(first.position));
    });

    it('keeps two subscriptions independent', async () => {
      const stream = uniqueStream('subscribe_two');
      const head = await subject.store.headPosition();
      const one = subject.subscribe(head);
      const two = subject.subscribe(head);
      const fromOne = one[Symbol.asyncIterator]();
      const fromTwo = two[Symbol.asyncIterator]();
      const receivingOne = receive(fromOne, stream, 2);
      const receivingTwo = receive(fromTwo, stream, 3);
      await subject.store.append(stream, newEvents(2), 'no_stream');
      expect(ofStream(await receivingOne, stream)).toHaveLength(2);
      await one.close();
      await subject.store.append(stream, newEvents(1), 1);
      const received = ofStream(await receivingTwo, stream);
      expect(received.map((event) => event.revision)).toEqual([0, 1, 2]);
      expect(await withTimeout(fromOne.next(), 'a closed subscription')).toEqual({ done: true, value: undefined });
    });
  });
}

function subscriptionClosingSpecs(subject: Subject): void {
  describe('closing a subscription', () => {
    it('ends a pending iteration promptly', async () => {
      const subscription = subject.subscribe(await subject.store.headPosition());
      const events = subscription[Symbol.asyncIterator]();
      const pending = events.next();
      await subscription.close();
      expect(await withTimeout(pending, 'the end of a closed subscription')).toEqual({ done: true, value: undefined });
    });

    it('ends a for-await loop when closed from inside it', async () => {
      const head = await subject.store.headPosition();
      await subject.store.append(uniqueStream('subscribe_loop'), newEvents(1), 'no_stream');
      const subscription = subject.subscribe(head);
      const seen: RecordedEvent[] = [];
      const loop = (async () => {
        for await (const event of subscription) {
          seen.push(event);
          await subscription.close();
        }
      })();
      await withTimeout(loop, 'the loop to end');
      expect(seen).toHaveLength(1);
    });
  });
}

function secondStoreSpecs(subject: Subject): void {
  describe('a second store on the same storage', () => {
    it('reads what the first appended and receives its live appends', async () => {
      if (!subject.opened.reopen) return;
      const second = await subject.opened.reopen();
      try {
        const stream = uniqueStream('second_store');
        const result = await subject.store.append(stream, newEvents(1), 'no_stream');
        expect(await second.readStream(stream)).toHaveLength(1);
        const subscription = second.subscribeToAll({ after: result.position });
        const receiving = receive(subscription[Symbol.asyncIterator](), stream, 1);
        await subject.store.append(stream, newEvents(1), 0);
        expect(ofStream(await receiving, stream)[0].revision).toBe(1);
        await subscription.close();
      } finally {
        await second.close();
      }
    });
  });
}

function idsAt(batch: NewEvent[], indexes: number[]): string[] {
  return indexes.map((index) => batch[index].id);
}

function organizationReadSpecs(subject: Subject): void {
  describe('reading one organization', () => {
    it('answers only its events, in position order, filtered and paged by position', async () => {
      const organization = `org_${randomUUID().replace(/-/g, '')}`;
      const ours = (type: string): NewEvent => ({ ...newEvent(type), metadata: { ...newEvent().metadata, organization, actor: `actor-${type}` } });
      const batch = uniqueStream('batch');
      const prompt = uniqueStream('prompt');
      await subject.store.append(batch, [ours('Started'), newEvent('Elsewhere')], 'no_stream');
      await subject.store.append(prompt, [ours('Appended'), ours('Promoted')], 'no_stream');
      const all = await subject.store.readOrganization({ organization, maxCount: 100 });
      expect(all.map((event) => event.type)).toEqual(['Started', 'Appended', 'Promoted']);
      expectStrictlyIncreasing(all.map((event) => event.position));
      const page = await subject.store.readOrganization({ organization, after: all[0].position, maxCount: 1 });
      expect(page.map((event) => event.type)).toEqual(['Appended']);
      expect((await subject.store.readOrganization({ organization, maxCount: 100, stream: prompt })).map((event) => event.type)).toEqual([
        'Appended',
        'Promoted',
      ]);
      expect((await subject.store.readOrganization({ organization, maxCount: 100, categories: ['contract_batch'] })).map((event) => event.type)).toEqual([
        'Started',
      ]);
      expect((await subject.store.readOrganization({ organization, maxCount: 100, type: 'Promoted' })).map((event) => event.streamName)).toEqual([prompt]);
      expect((await subject.store.readOrganization({ organization, maxCount: 100, actor: 'actor-Appended' })).map((event) => event.type)).toEqual(['Appended']);
      expect(await subject.store.readOrganization({ organization, maxCount: 100, from: '2999-01-01T00:00:00.000Z' })).toEqual([]);
      expect(await subject.store.readOrganization({ organization, maxCount: 100, to: '2000-01-01T00:00:00.000Z' })).toEqual([]);
    });

    it('records where its chain ends apart from its events: the last chained event, and none before the first', async () => {
      const organization = `org_${randomUUID().replace(/-/g, '')}`;
      const ours = (): NewEvent => ({ ...newEvent(), metadata: { ...newEvent().metadata, organization } });
      expect(await subject.store.chainEnd?.(organization)).toEqual({ hashes: [null], at: null, absent: true });
      const stream = uniqueStream('chain_end');
      await subject.store.append(stream, [ours(), ours()], 'no_stream');
      await subject.store.append(uniqueStream('elsewhere'), [newEvent()], 'no_stream');
      const [, last] = await subject.store.readOrganization({ organization, maxCount: 10 });
      expect(await subject.store.chainEnd?.(organization)).toEqual({ hashes: [last.chain?.hash], at: { stream, revision: 1 } });
    });

    it('links each of its events to the one before it in log order, even when appended concurrently to several streams', async () => {
      const organization = `org_${randomUUID().replace(/-/g, '')}`;
      const ours = (): NewEvent => ({ ...newEvent(), metadata: { ...newEvent().metadata, organization } });
      const streams = Array.from({ length: 4 }, () => uniqueStream('chain'));
      await Promise.all(streams.map((stream) => subject.store.append(stream, [ours(), ours()], 'no_stream')));
      await Promise.all(streams.map((stream) => subject.store.append(stream, [ours()], 1)));
      await subject.store.append(streams[0], [ours()], 'any');
      const audited = await subject.store.readOrganization({ organization, maxCount: 100 });
      expect(audited).toHaveLength(13);
      expectStrictlyIncreasing(audited.map((event) => event.position));
      expect(audited[0].chain?.prevHash).toBeNull();
      audited.forEach((event, index) => {
        expect(event.chain?.hash).toBe(eventHash(event, event.chain?.prevHash ?? null));
        if (index > 0) expect(event.chain?.prevHash).toBe(audited[index - 1].chain?.hash);
      });
      // The time the hash covers is the time the event reads with, wherever it is read.
      const [first] = await subject.store.readStream(audited[0].streamName, { maxCount: 1 });
      const { chain: _chain, ...asRecorded } = audited[0];
      expect(first).toEqual(asRecorded);
    });

    it('leaves liveness events (lease renewals) out of the organization chain and reads, and stores them as appended', async () => {
      const organization = `org_${randomUUID().replace(/-/g, '')}`;
      const ours = (liveness = false): NewEvent => ({
        ...newEvent(),
        metadata: { ...newEvent().metadata, organization, ...(liveness ? { [LIVENESS_METADATA_KEY]: true } : {}) },
      });
      const stream = uniqueStream('liveness');
      const heartbeat = ours(true);
      await subject.store.append(stream, [ours(), heartbeat], 'no_stream');
      await subject.store.append(stream, [ours()], 1);
      const audited = await subject.store.readOrganization({ organization, maxCount: 100 });
      expect(audited.map((event) => event.revision)).toEqual([0, 2]);
      expect(audited[1].chain?.prevHash).toBe(audited[0].chain?.hash);
      expect((await subject.store.readStream(stream, { fromRevision: 1, maxCount: 1 }))[0].metadata).toEqual(heartbeat.metadata);
    });

    it('keeps one chain when two stores append the same derived-id events at once, and each goes on appending after', async () => {
      if (!subject.opened.reopen) return;
      const second = await subject.opened.reopen();
      try {
        const organization = `org_${randomUUID().replace(/-/g, '')}`;
        const ours = (): NewEvent => ({ ...newEvent(), metadata: { ...newEvent().metadata, organization } });
        for (let round = 0; round < 4; round++) {
          // Two instances reacting to one event append the events whose ids they derived from it.
          const stream = uniqueStream('same_ids');
          const batch = [ours(), ours()];
          const [first, again] = await Promise.all([
            subject.store.append(stream, batch, 'no_stream'),
            second.append(stream, structuredClone(batch), 'no_stream'),
          ]);
          expect(again).toEqual(first);
          await Promise.all([subject.store.append(uniqueStream('after'), [ours()], 'no_stream'), second.append(uniqueStream('after'), [ours()], 'no_stream')]);
        }
        const audited = await subject.store.readOrganization({ organization, maxCount: 100 });
        expect(audited).toHaveLength(16);
        expect(audited[0].chain?.prevHash).toBeNull();
        audited.forEach((event, index) => {
          expect(event.chain?.hash).toBe(eventHash(event, event.chain?.prevHash ?? null));
          if (index > 0) expect(event.chain?.prevHash).toBe(audited[index - 1].chain?.hash);
        });
      } finally {
        await second.close();
      }
    });
  });
}
