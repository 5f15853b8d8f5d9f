import * as os from 'node:os';
import * as path from 'node:path';
import * as fs from 'node:fs';
import type { ExecutionContext } from '@nestjs/common';
import { from, lastValueFrom } from 'rxjs';
import { SqliteEventStore } from '../../src/infrastructure/event-store/sqlite/sqlite-event-store';
import { ReadYourWritesInterceptor } from '../../src/infrastructure/http/read-your-writes.interceptor';
import { JsonLogger } from '../../src/infrastructure/logging/json-logger';
import type { Projection } from '../../src/infrastructure/processing/projection';
import { ProjectionRunner } from '../../src/infrastructure/processing/projection-runner';
import { PositionTrackingEventStore } from '../../src/infrastructure/processing/read-your-writes';
import { MemoryReadStore } from '../../src/infrastructure/read-store/memory/memory-read-store';

/** A projection slow enough that an answer sent right after the append would not see its work. */
const slowProjection: Projection = {
  name: 'slow',
  eventTypes: ['ThingHappened'],
  collections: { things: [] },
  async project(event, store) {
    await new Promise((resolve) => setTimeout(resolve, 150));
    await store.collection('things').replaceOne({ _id: event.id }, { _id: event.id }, { upsert: true });
  },
};

describe('read-your-writes: a command answers once its events are projected', () => {
  const lines: string[] = [];
  const logger = new JsonLogger('debug', (line) => lines.push(line));
  const context = { switchToHttp: () => ({ getRequest: () => ({ correlationId: 'corr-ryw' }) }) } as unknown as ExecutionContext;
  let eventStore: PositionTrackingEventStore;
  let readStore: MemoryReadStore;
  let runner: ProjectionRunner;

  beforeEach(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'assay-ryw-'));
    eventStore = new PositionTrackingEventStore(new SqliteEventStore(path.join(dir, 'events.sqlite')));
    readStore = new MemoryReadStore();
    runner = new ProjectionRunner(eventStore, readStore, [slowProjection], logger);
    await runner.start();
  });

  afterEach(async () => {
    await runner.stop();
    await eventStore.close();
  });

  const append = (stream: string) =>
    eventStore.append(stream, [{ id: globalThis.crypto.randomUUID(), type: 'ThingHappened', data: {}, metadata: { organization: 'o', actor: 'a', correlationId: 'c', causationId: 'c' } }], 'no_stream');

  it('without it, a read right after the append misses the write (the control)', async () => {
    await append('thing-1');
    expect(await readStore.collection('things').count({})).toBe(0);
  });

  it('holds the answer until the read models reflect the append', async () => {
    const interceptor = new ReadYourWritesInterceptor(runner, 5000, logger);
    const answer = await lastValueFrom(interceptor.intercept(context, { handle: () => from(append('thing-2').then(() => 'done')) }));
    expect(answer).toBe('done');
    expect(await readStore.collection('things').count({})).toBe(1);
  });

  it('answers after its bounded wait anyway, and logs the lag with the correlation id', async () => {
    const interceptor = new ReadYourWritesInterceptor(runner, 10, logger);
    const answer = await lastValueFrom(interceptor.intercept(context, { handle: () => from(append('thing-3').then(() => 'done')) }));
    expect(answer).toBe('done');
    expect(await readStore.collection('things').count({})).toBe(0);
    expect(lines.some((line) => line.includes('read models lag behind a write') && line.includes('corr-ryw'))).toBe(true);
  });

  it('does not wait for a request that appended nothing', async () => {
    const interceptor = new ReadYourWritesInterceptor(runner, 5000, logger);
    await append('thing-4');
    await lastValueFrom(interceptor.intercept(context, { handle: () => from(Promise.resolve('read')) }));
    // It answered while the earlier append was still being projected: it waited for nothing.
    expect(await readStore.collection('things').count({})).toBe(0);
  });
});
