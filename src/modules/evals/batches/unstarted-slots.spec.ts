import * as path from 'node:path';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { BatchStarter, StartRequest } from './batch-starter';
import { batchStream } from './batch.events';
import { STRICT_EXECUTION_POLICY } from '../shared/execution-policy';
import type { EventMetadata } from '#shared/domain-event';
import { plainCase } from '../../../../test/support/eval-case';
import { tempDir } from '../../../../test/support/temp-dirs';

const HOLD_MS = 1000;
const metadata: EventMetadata = { organization: 'acme', actor: 'test', correlationId: 'c', causationId: 'c' };

function request(now: Date): StartRequest {
  return {
    plan: {
      suite: { id: 's', name: 's', prompt: 'Write {{word}}', source: null },
      cases: [plainCase({ variables: { word: 'hello' } })],
      variants: [{ harness: 'command', model: 'm', profile: { run: 'true' }, sandbox: null, credentials: null }],
      trials: 1,
    },
    checksIn: false,
    trigger: { source: 'api', url: null },
    idempotency: null,
    context: { caller: { organization: 'acme', kind: 'api_key', id: 'key_1', name: 'test', permissions: [] }, correlationId: 'c', now },
  };
}

/** A start that took its slot at `at` and died before recording its batch. */
async function deadStart(store: SqliteEventStore, batchId: string, at: Date, revision: number): Promise<void> {
  const data = { organization: 'acme', batchId, takenAt: at.toISOString() };
  await store.append('batchslots-acme', [{ id: crypto.randomUUID(), type: 'BatchSlotTaken', data, metadata }], revision < 0 ? 'no_stream' : revision);
}

/**
 * The start's own path, with no saga running: a start that finds the organization full gives back
 * the slots of starts that held them past the hold without recording a batch, and never one whose
 * batch started.
 */
describe('a start that finds every slot held', () => {
  let store: SqliteEventStore;

  beforeEach(() => {
    store = new SqliteEventStore(path.join(tempDir(), 'events.sqlite'));
  });

  afterEach(async () => {
    await store.close();
  });

  it('releases overdue unstarted slots itself, with the reason, and is admitted', async () => {
    const now = new Date();
    const long = new Date(now.getTime() - HOLD_MS - 1);
    await deadStart(store, 'bat_dead1', long, -1);
    await deadStart(store, 'bat_dead2', long, 0);
    await deadStart(store, 'bat_dead3', long, 1);
    const starter = new BatchStarter(store, { ...STRICT_EXECUTION_POLICY, startHoldMs: HOLD_MS });

    const started = await starter.start(request(now));

    const slots = await store.readStream('batchslots-acme');
    const released = slots.filter((event) => event.type === 'BatchSlotReleased').map((event) => event.data as { batchId: string; reason: string });
    expect(released).toEqual(['bat_dead1', 'bat_dead2', 'bat_dead3'].map((batchId) => expect.objectContaining({ batchId, reason: 'start-not-completed' })));
    expect(slots.at(-1)).toMatchObject({ type: 'BatchSlotTaken', data: { batchId: started.id } });
    expect((await store.readStream(batchStream('bat_dead1'))).map((event) => event.type)).toEqual(['BatchStartAbandoned']);
  });

  it('keeps slots held within the hold, and those whose batch started: 409', async () => {
    const now = new Date();
    const starter = new BatchStarter(store, { ...STRICT_EXECUTION_POLICY, startHoldMs: HOLD_MS });
    const first = await starter.start(request(new Date(now.getTime() - 2 * HOLD_MS)));
    await deadStart(store, 'bat_recent1', new Date(now.getTime() - HOLD_MS + 200), 0);
    await deadStart(store, 'bat_recent2', now, 1);

    await expect(starter.start(request(now))).rejects.toThrow('already has 3 batches running');
    expect((await store.readStream('batchslots-acme')).map((event) => event.type)).toEqual(['BatchSlotTaken', 'BatchSlotTaken', 'BatchSlotTaken']);
    expect((await store.readStream(batchStream(first.id))).map((event) => event.type)).toEqual(['BatchStarted']);
    expect(await store.readStream(batchStream('bat_recent1'))).toEqual([]);
  });
});
