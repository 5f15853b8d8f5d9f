import * as path from 'node:path';
import type { NewEvent } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { OPEN_BATCHES, openBatchesProjection, sagaCatchUpAfter } from './open-batches.projection';
import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { tempDir } from '../../../../test/support/temp-dirs';
import { withoutEvolveOne } from '../../../../test/contract/read-store.contract';

const metadata = { organization: 'acme', actor: 'test', correlationId: 'c', causationId: 'c' };
let sequence = 0;
const event = (type: string, batchId: string): NewEvent => ({ id: `ev_${(sequence += 1)}`, type, data: { batchId, organization: 'acme' }, metadata });

/**
 * Where the trial saga's catch-up starts at a server's start: after everything that only concerns
 * batches that ended and gave their slot back, never after the start of one that did not.
 */
describe('the trial saga catches up from the oldest open batch', () => {
  let store: SqliteEventStore;
  let readStore: MemoryReadStore;
  let runner: ProjectionRunner;

  beforeEach(async () => {
    store = SqliteEventStore.open(path.join(tempDir(), 'events.sqlite'));
    readStore = new MemoryReadStore({ freezeHanded: true });
    runner = new ProjectionRunner(store, readStore, [openBatchesProjection], new JsonLogger('silent'));
  });
  afterEach(async () => {
    await runner.stop();
    await store.close();
  });

  /** Appends to one stream each, as the batch and slot streams are, answering the positions. */
  async function append(...events: NewEvent[]): Promise<number[]> {
    const positions: number[] = [];
    for (const one of events) positions.push((await store.append(`s-${one.id}`, [one], 'no_stream')).position);
    return positions;
  }

  /** A fresh runner over the log as it is now, as a starting server has, then where the saga starts. */
  async function catchUpAfter(projectInto: ReadStore = readStore): Promise<number> {
    await runner.stop();
    runner = new ProjectionRunner(store, projectInto, [openBatchesProjection], new JsonLogger('silent'));
    await runner.start();
    await runner.stop();
    return sagaCatchUpAfter(projectInto, runner);
  }

  it('reads the whole log while the projection has no checkpoint', async () => {
    await append(event('BatchStarted', 'b1'));
    expect(await sagaCatchUpAfter(readStore, runner)).toBe(-1);
  });

  it('skips batches that ended and gave back their slot, in either order', async () => {
    await append(event('BatchStarted', 'b1'), event('BatchSlotReleased', 'b1'), event('BatchFinished', 'b1'));
    await append(event('BatchStarted', 'b2'), event('BatchFailed', 'b2'), event('BatchSlotReleased', 'b2'));
    const head = await store.headPosition();
    expect(await catchUpAfter()).toBe(head);
    expect(await readStore.collection(OPEN_BATCHES).count({})).toBe(0);
  });

  it('starts at the start of the oldest batch that did not end, or ended holding its slot', async () => {
    const [ended] = await append(event('BatchStarted', 'b1'), event('BatchSlotReleased', 'b1'), event('BatchFinished', 'b1'));
    const [holding] = await append(event('BatchStarted', 'b2'), event('BatchFinished', 'b2'));
    const [running] = await append(event('BatchStarted', 'b3'));
    expect(ended).toBeLessThan(holding);
    expect(await catchUpAfter()).toBe(holding - 1);
    await append(event('BatchSlotReleased', 'b2'));
    expect(await catchUpAfter()).toBe(running - 1);
    await append(event('BatchSlotReleased', 'b3'), event('BatchFinished', 'b3'));
    expect(await catchUpAfter()).toBe(await store.headPosition());
  });

  it('passes over the tombstones closed batches leave on a store that reads, then writes (as MongoDB)', async () => {
    await append(event('BatchStarted', 'b1'), event('BatchSlotReleased', 'b1'), event('BatchFinished', 'b1'));
    const [running] = await append(event('BatchStarted', 'b2'));
    expect(await catchUpAfter(withoutEvolveOne(readStore))).toBe(running - 1);
    expect(await readStore.collection(OPEN_BATCHES).findOne({ _id: 'b1' })).toMatchObject({ _deleted: true });
  });

  it('never starts after its checkpoint: a batch started later is read from the log', async () => {
    await append(event('BatchStarted', 'b1'), event('BatchSlotReleased', 'b1'), event('BatchFinished', 'b1'));
    const checkpointed = await catchUpAfter();
    // Appended after the projection's checkpoint: its document does not exist yet.
    await append(event('BatchStarted', 'b2'));
    expect(await sagaCatchUpAfter(readStore, runner)).toBe(checkpointed);
  });

  it('ignores a slot given back by a start that failed before its batch started', async () => {
    await append(event('BatchSlotReleased', 'never-started'));
    expect(await catchUpAfter()).toBe(await store.headPosition());
  });
});
