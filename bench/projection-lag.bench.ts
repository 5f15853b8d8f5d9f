/**
 * "lag": with a ProjectionRunner live on a SqliteEventStore and a MemoryReadStore, how long
 * after an append is acknowledged its document is visible in the read store. The baseline is
 * the bare append latency (a store with no runner) measured in the same run, in alternating
 * blocks. Target: p99 lag <= 20 ms.
 */
import type { EventStore } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { JsonLogger } from '#infrastructure/logging/json-logger';
import { ProjectionRunner } from '#infrastructure/processing/projection-runner';
import { MemoryReadStore } from '#infrastructure/read-store/memory/memory-read-store';
import { API_KEYS } from '#modules/auth/api-keys/api-key.projection';
import { allProjections } from '../src/projections';
import { apiKeyIssued, BenchKey, newBenchKey, seededRandom } from './support/api-key-events';
import { tempDir } from './support/sqlite-log';
import type { Progress, Suite } from './support/suite';
import { nowMs, p50, p99, Row } from './support/table';

const APPENDS = 10_000;
const WARM_UP = 500;
/** Live and bare appends alternate in blocks of this many. */
const BLOCK = 100;
const VISIBILITY_TIMEOUT_MS = 5_000;
const TARGET_P99_MS = 20;

export const lagSuite: Suite = {
  name: 'lag',
  description:
    `${APPENDS.toLocaleString('en-US')} single-event appends (ApiKeyIssued, new key each) with a ProjectionRunner live on SqliteEventStore + MemoryReadStore, ` +
    `until the key's document is readable; baseline: bare appends to a store with no runner, in alternating blocks of ${BLOCK}`,
  async run(progress: Progress): Promise<Row[]> {
    const temp = tempDir('lag');
    const live = SqliteEventStore.open(temp.file('live.sqlite'));
    const bare = SqliteEventStore.open(temp.file('bare.sqlite'));
    const readStore = new MemoryReadStore();
    const logger = new JsonLogger('warn', (line) => progress.log(`runner: ${line}`));
    const runner = new ProjectionRunner(live, readStore, allProjections, logger, 'bench-lag');
    const keys = readStore.collection(API_KEYS);
    const random = seededRandom(3);
    const newKey = (): BenchKey => newBenchKey(random, 50, Date.now());
    try {
      await runner.start();

      /** Appends one key to the live store; returns [append start -> visible ms, ack -> visible ms]. */
      const liveAppend = async (key: BenchKey): Promise<[number, number]> => {
        const event = apiKeyIssued(key, new Date());
        let acknowledged = 0;
        const started = nowMs();
        // Stamped in the append's own reaction, the first moment a caller can know of the ack;
        // the runner, woken by the append, may already be projecting by then.
        const { position } = await live.append(key.stream, [event], 'no_stream').then((result) => {
          acknowledged = nowMs();
          return result;
        });
        if (!(await runner.waitFor(position, VISIBILITY_TIMEOUT_MS))) {
          throw new Error(`Position ${position} was not projected within ${VISIBILITY_TIMEOUT_MS} ms.`);
        }
        const document = await keys.findOne({ _id: key.keyId });
        const visible = nowMs();
        if (!document) throw new Error(`Key ${key.keyId} is not in ${API_KEYS} after its position was reached.`);
        return [visible - started, visible - acknowledged];
      };
      const bareAppend = async (key: BenchKey, store: EventStore): Promise<number> => {
        const event = apiKeyIssued(key, new Date());
        const started = nowMs();
        await store.append(key.stream, [event], 'no_stream');
        return nowMs() - started;
      };

      for (let i = 0; i < WARM_UP; i++) {
        await liveAppend(newKey());
        await bareAppend(newKey(), bare);
      }
      progress.log(`warmed up with ${WARM_UP} appends on each side`);

      const lag: number[] = [];
      const endToEnd: number[] = [];
      const bareAppendMs: number[] = [];
      const counter = progress.counter('appends (live + bare)', 2 * APPENDS);
      for (let done = 0; done < APPENDS; done += BLOCK) {
        const size = Math.min(BLOCK, APPENDS - done);
        for (let i = 0; i < size; i++) bareAppendMs.push(await bareAppend(newKey(), bare));
        counter.tick(size);
        for (let i = 0; i < size; i++) {
          const [total, visible] = await liveAppend(newKey());
          endToEnd.push(total);
          lag.push(visible);
        }
        counter.tick(size);
      }
      return [
        { benchmark: 'lag: append ack -> document visible vs bare append', measure: 'p50 ms', value: p50(lag), baseline: p50(bareAppendMs) },
        {
          benchmark: 'lag: append ack -> document visible vs bare append',
          measure: 'p99 ms',
          value: p99(lag),
          baseline: p99(bareAppendMs),
          target: { kind: 'at-most', value: TARGET_P99_MS, unit: 'ms' },
        },
        { benchmark: 'lag: append call -> document visible vs bare append', measure: 'p50 ms', value: p50(endToEnd), baseline: p50(bareAppendMs) },
        { benchmark: 'lag: append call -> document visible vs bare append', measure: 'p99 ms', value: p99(endToEnd), baseline: p99(bareAppendMs) },
      ];
    } finally {
      await runner.stop();
      await live.close();
      await bare.close();
      temp.remove();
    }
  },
};
