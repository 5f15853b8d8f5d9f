import * as path from 'node:path';
import { fastify, FastifyInstance } from 'fastify';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { configureFastify } from './fastify-setup';
import type { AssayRequest } from './operation.decorator';
import { holdAnswersUntilProjected } from './read-your-writes';
import { JsonLogger } from '../logging/json-logger';
import type { Projection } from '../processing/projection';
import { ProjectionRunner } from '../processing/projection-runner';
import { PositionTrackingEventStore, WriteTracker } from '../processing/read-your-writes';
import { MemoryReadStore } from '../read-store/memory/memory-read-store';
import { waitUntil } from '../../../test/support/servers';
import { tempDir } from '../../../test/support/temp-dirs';

const PROJECTION_DELAY_MS = 150;

/** A projection slow enough that an answer sent right after the append would not see its work. */
const slowProjection: Projection = {
  name: 'slow',
  eventTypes: ['ThingHappened'],
  collections: { things: [] },
  async project(event, store) {
    await new Promise((resolve) => setTimeout(resolve, PROJECTION_DELAY_MS));
    await store.collection('things').replaceOne({ _id: event.id }, { _id: event.id }, { upsert: true });
  },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('read-your-writes: a request that appended answers once its events are projected', () => {
  let lines: string[];
  let writes: WriteTracker;
  let eventStore: PositionTrackingEventStore;
  let readStore: MemoryReadStore;
  let runner: ProjectionRunner;
  let app: FastifyInstance;
  let url: string;
  /** Opened by a test to let a held write go on; `held` resolves once a held write has started. */
  let gate: { open(): void; opened: Promise<void>; held: Promise<void>; started(): void };

  const append = (stream: string, correlationId: string) =>
    eventStore.append(
      stream,
      [
        {
          id: globalThis.crypto.randomUUID(),
          type: 'ThingHappened',
          data: {},
          metadata: { organization: 'o', actor: 'a', correlationId, causationId: correlationId },
        },
      ],
      'no_stream',
    );
  const things = () => readStore.collection('things').count({});

  /** A server with the service's hooks and two routes: one appends (after a delay), one only reads. */
  async function serve(timeoutMs: number): Promise<void> {
    const logger = new JsonLogger('debug', (line) => lines.push(line));
    app = fastify({ logger: false, forceCloseConnections: true });
    configureFastify(app, logger, 1024 * 1024);
    holdAnswersUntilProjected(app, writes, runner, timeoutMs, logger);
    app.post('/write', async (request) => {
      const { stream, delayMs, hold } = request.body as { stream: string; delayMs?: number; hold?: boolean };
      if (hold) {
        gate.started();
        await gate.opened;
      }
      await sleep(delayMs ?? 0);
      await append(stream, (request as unknown as AssayRequest).correlationId);
      return { written: stream };
    });
    app.post('/read', async () => ({ things: await things() }));
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  }

  const post = (route: string, body: unknown, correlationId?: string, signal?: AbortSignal) =>
    fetch(`${url}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(correlationId ? { 'x-correlation-id': correlationId } : {}) },
      body: JSON.stringify(body),
      signal,
    });

  beforeEach(async () => {
    lines = [];
    let open = () => {};
    let started = () => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    const held = new Promise<void>((resolve) => (started = resolve));
    gate = { open, opened, held, started };
    const dir = tempDir('assay-ryw-');
    writes = new WriteTracker();
    eventStore = new PositionTrackingEventStore(new SqliteEventStore(path.join(dir, 'events.sqlite')), writes);
    readStore = new MemoryReadStore();
    runner = new ProjectionRunner(eventStore, readStore, [slowProjection], new JsonLogger('silent'));
    await runner.start();
  });

  afterEach(async () => {
    await app.close();
    await runner.stop();
    await eventStore.close();
  });

  it('without a request, a read right after the append misses the write (the control)', async () => {
    await serve(5000);
    await append('thing-control', 'no-request');
    expect(await things()).toBe(0);
  });

  it('holds the answer of a request that appended until the read models reflect it', async () => {
    await serve(5000);
    const answer = await post('/write', { stream: 'thing-1' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ written: 'thing-1' });
    expect(await things()).toBe(1);
    expect(writes.openCorrelations).toBe(0);
  });

  it('answers after its bounded wait anyway, and logs the lag with the correlation id', async () => {
    await serve(10);
    const answer = await post('/write', { stream: 'thing-2' }, 'corr-ryw-lag');
    expect(answer.status).toBe(200);
    expect(await things()).toBe(0);
    expect(lines.some((line) => line.includes('read models lag behind a write') && line.includes('corr-ryw-lag'))).toBe(true);
  });

  it('does not hold a request that appended nothing, nor note appends no request has open', async () => {
    await serve(5000);
    await append('thing-3', 'saga-correlation');
    const answer = await post('/read', {});
    // It answered while the earlier append was still being projected: it waited for nothing.
    expect(await answer.json()).toEqual({ things: 0 });
    expect(writes.openCorrelations).toBe(0);
  });

  it('holds each of two concurrent requests that share a correlation id until the later write is projected', async () => {
    await serve(5000);
    const [slowWrite, quickRead] = [post('/write', { stream: 'thing-4', delayMs: 50 }, 'corr-shared'), post('/read', {}, 'corr-shared')];
    expect(await (await quickRead).json()).toEqual({ things: 0 });
    expect((await slowWrite).status).toBe(200);
    expect(await things()).toBe(1);
    expect(writes.openCorrelations).toBe(0);
  });

  it('closes the correlation of a client that hangs up before its answer once the handler ends', async () => {
    await serve(5000);
    const abort = new AbortController();
    const pending = post('/write', { stream: 'thing-5', hold: true }, 'corr-abandoned', abort.signal);
    await gate.held;
    expect(writes.openCorrelations).toBe(1);
    abort.abort();
    await expect(pending).rejects.toThrow();
    gate.open();
    await waitUntil(async () => writes.openCorrelations === 0, 5000);
    expect(await eventStore.readStream('thing-5')).toHaveLength(1);
  });

  it("counts, per projection, the events it applied: what the API key cache's invalidation rests on", async () => {
    await serve(5000);
    expect(runner.generation('slow')).toBe(0);
    await append('thing-6', 'c');
    const other = await eventStore.append(
      'other-1',
      [
        {
          id: globalThis.crypto.randomUUID(),
          type: 'SomethingElse',
          data: {},
          metadata: { organization: 'o', actor: 'a', correlationId: 'c', causationId: 'c' },
        },
      ],
      'no_stream',
    );
    expect(await runner.waitFor(other.position, 5000)).toBe(true);
    expect(runner.generation('slow')).toBe(1);
    expect(runner.generation('unknown')).toBe(0);
  });
});
