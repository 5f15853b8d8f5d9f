/**
 * "event-ids": a trial's three appends (its queueing, its claim, its seven-event outcome, 8 trials
 * at once, through the SQLite store's group commit) on a log already holding a million events,
 * with the new events' ids random (UUID v4, as they once were) against
 * time-ordered (UUID v7, `newEventId`), in alternating rounds on the same log. Measured: the CPU
 * of this process per trial (the store commits on its main thread, and syncs in the pool) and
 * the wall per trial.
 */
import { randomUUID } from 'node:crypto';
import type { NewEvent } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { newEventId } from '#shared/ids';
import { adapterLayout, openRawLog, RawLogWriter, tempDir } from './support/sqlite-log';
import type { Progress, Suite } from './support/suite';
import { median, Row } from './support/table';

const LOG_EVENTS = 1_000_000;
const FILL_CHUNK = 20_000;
const TRIALS = 500;
const AT_ONCE = 8;
const ROUNDS = 3;

type IdSource = () => string;

const METADATA = { organization: 'org_bench', actor: 'system:trial-saga', correlationId: 'bat_bench', causationId: 'bat_bench' };

/** An event of the size a trivial trial stores for it. */
function event(id: IdSource, type: string, bytes: number): NewEvent {
  return { id: id(), type, data: { trialId: 'trl_bench', detail: 'x'.repeat(bytes) }, metadata: METADATA };
}

/** The log's history: events of earlier trials, with random ids, as any log written before v7 ids. */
function* history(from: number, count: number): Iterable<{ stream: string; revision: number; event: NewEvent; createdAt: string }> {
  const createdAt = new Date().toISOString();
  for (let index = from; index < from + count; index += 1) {
    yield { stream: `trial-old-${index}`, revision: 0, event: event(randomUUID, 'TrialQueued', 300), createdAt };
  }
}

async function trials(store: SqliteEventStore, id: IdSource, count: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const stream = `trial-${randomUUID()}-${next++}`;
      await store.append(stream, [event(id, 'TrialQueued', 120)], 'no_stream');
      await store.append(stream, [event(id, 'TrialStarted', 180)], 0);
      const outcome = [
        'TrialMessageRecorded',
        'TrialCommandRecorded',
        'TrialMessageRecorded',
        'TrialConversationEnded',
        'TrialCommandRecorded',
        'TrialVerified',
      ];
      await store.append(stream, [...outcome.map((type) => event(id, type, 200)), event(id, 'TrialScored', 1400)], 1);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
}

/** CPU ms (this process, user and system) and wall ms per trial of one round. */
async function round(store: SqliteEventStore, id: IdSource): Promise<{ cpu: number; wall: number }> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await trials(store, id, TRIALS);
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { cpu: (cpu.user + cpu.system) / 1000 / TRIALS, wall: wall / TRIALS };
}

export const eventIdsSuite: Suite = {
  name: 'event-ids',
  description: `a trial's appends (3 appends, 9 events, ${AT_ONCE} trials at once) on a log of ${LOG_EVENTS.toLocaleString('en-US')} events, new ids time-ordered (v7) vs random (v4), ${ROUNDS} alternating rounds of ${TRIALS} trials, median`,
  async run(progress: Progress): Promise<Row[]> {
    const temp = tempDir('event-ids');
    const file = temp.file('events.sqlite');
    let store: SqliteEventStore | null = null;
    try {
      const writer = new RawLogWriter(openRawLog(file, await adapterLayout(file)));
      for (let from = 0; from < LOG_EVENTS; from += FILL_CHUNK) {
        writer.bulkLoad(history(from, FILL_CHUNK));
        if ((from + FILL_CHUNK) % 200_000 === 0) progress.log(`log filled to ${(from + FILL_CHUNK).toLocaleString('en-US')} events`);
      }
      writer.db.pragma('wal_checkpoint(TRUNCATE)');
      writer.close();
      store = SqliteEventStore.open(file);
      const random: IdSource = randomUUID;
      const ordered: IdSource = () => newEventId();
      await round(store, random);
      await round(store, ordered);
      const samples = { random: [] as Array<{ cpu: number; wall: number }>, ordered: [] as Array<{ cpu: number; wall: number }> };
      for (let index = 0; index < ROUNDS; index += 1) {
        samples.random.push(await round(store, random));
        samples.ordered.push(await round(store, ordered));
        const [r, o] = [samples.random[index], samples.ordered[index]];
        progress.log(`round ${index + 1}/${ROUNDS}: CPU ms a trial ${o.cpu.toFixed(3)} ordered, ${r.cpu.toFixed(3)} random`);
      }
      const benchmark = `a trial's appends on a log of ${LOG_EVENTS.toLocaleString('en-US')} events (baseline: random v4 ids)`;
      return [
        {
          benchmark,
          measure: 'CPU ms per trial, time-ordered v7 ids',
          value: median(samples.ordered.map((sample) => sample.cpu)),
          baseline: median(samples.random.map((sample) => sample.cpu)),
        },
        {
          benchmark,
          measure: 'wall ms per trial, time-ordered v7 ids',
          value: median(samples.ordered.map((sample) => sample.wall)),
          baseline: median(samples.random.map((sample) => sample.wall)),
        },
      ];
    } finally {
      await store?.close();
      temp.remove();
    }
  },
};
