/**
 * "appends": the SQLite adapter's append through the EventStore port (revision check,
 * idempotency lookup, serialisation, an fsync per commit under synchronous=FULL) against a raw
 * better-sqlite3 loop inserting the same rows into the same schema under the same pragmas,
 * one transaction per append batch. Target: at least half the raw throughput.
 */
import { randomUUID } from 'node:crypto';
import type { ExpectedRevision, NewEvent } from '#infrastructure/event-store/event-store.port';
import { SqliteEventStore } from '#infrastructure/event-store/sqlite/sqlite-event-store';
import { newId } from '#shared/ids';
import { apiKeyIssued, newBenchKey, seededRandom } from './support/api-key-events';
import { adapterLayout, openRawLog, RawLogWriter, tempDir } from './support/sqlite-log';
import type { Progress, Suite } from './support/suite';
import { median, Row, startTimer } from './support/table';

const ROUNDS = 5;
/** The warm-up runs this fraction of each variant's appends on both sides before measuring. */
const WARM_UP_FRACTION = 0.2;
/** Streams the "existing stream" variants spread their appends over, round robin. */
const EXISTING_STREAMS = 100;
const TARGET_RATIO = 0.5;
/** Raw and port runs alternate in chunks of about this many events. */
const CHUNK_EVENTS = 200;

interface Variant {
  label: string;
  eventsPerAppend: number;
  appends: number;
  existingStreams: boolean;
}

const VARIANTS: Variant[] = [
  { label: '1 event/append, new stream', eventsPerAppend: 1, appends: 3_000, existingStreams: false },
  { label: '20 events/append, new stream', eventsPerAppend: 20, appends: 500, existingStreams: false },
  { label: '1 event/append, existing stream', eventsPerAppend: 1, appends: 3_000, existingStreams: true },
  { label: '20 events/append, existing stream', eventsPerAppend: 20, appends: 500, existingStreams: true },
];

/** One append: the subject passes `expected`, the raw writer numbers from `firstRevision`. */
interface Step {
  stream: string;
  events: NewEvent[];
  expected: ExpectedRevision;
  firstRevision: number;
}

/** A pool of realistic payloads; each event gets its own id, which is all the store tells apart. */
function payloadPool(size: number): NewEvent[] {
  const random = seededRandom(7);
  const now = new Date();
  return Array.from({ length: size }, () => apiKeyIssued(newBenchKey(random, 50, now.getTime()), now));
}

class Workloads {
  private next = 0;
  private runs = 0;

  constructor(private readonly pool: NewEvent[]) {}

  private events(count: number): NewEvent[] {
    return Array.from({ length: count }, () => {
      const template = this.pool[this.next++ % this.pool.length];
      return { ...template, id: randomUUID() };
    });
  }

  /**
   * The steps of one run and, for the existing-stream variants, the seeding steps that create
   * those streams first (not measured). Each run gets streams of its own.
   */
  plan(variant: Variant, appends: number): { seed: Step[]; steps: Step[] } {
    const run = ++this.runs;
    if (!variant.existingStreams) {
      const steps = Array.from({ length: appends }, () => ({
        stream: `apikey-${newId('key')}`,
        events: this.events(variant.eventsPerAppend),
        expected: 'no_stream' as const,
        firstRevision: 0,
      }));
      return { seed: [], steps };
    }
    const streams = Array.from({ length: EXISTING_STREAMS }, (_, index) => `bench-run${run}-${index}`);
    const tips = streams.map(() => 0);
    const seed = streams.map((stream) => ({ stream, events: this.events(1), expected: 'no_stream' as const, firstRevision: 0 }));
    const steps = Array.from({ length: appends }, (_, index) => {
      const slot = index % streams.length;
      const step: Step = { stream: streams[slot], events: this.events(variant.eventsPerAppend), expected: tips[slot], firstRevision: tips[slot] + 1 };
      tips[slot] += variant.eventsPerAppend;
      return step;
    });
    return { seed, steps };
  }
}

async function appendThroughPort(store: SqliteEventStore, steps: Step[]): Promise<void> {
  for (const step of steps) {
    const result = await store.append(step.stream, step.events, step.expected);
    if (result.nextExpectedRevision !== step.firstRevision + step.events.length - 1) {
      throw new Error(`Append to ${step.stream} ended at revision ${result.nextExpectedRevision}, not ${step.firstRevision + step.events.length - 1}.`);
    }
  }
}

function appendRaw(writer: RawLogWriter, steps: Step[]): void {
  for (const step of steps) writer.append(step.stream, step.firstRevision, step.events);
}

/**
 * Events per second of one run of each side, each on a fresh plan of the same shape. The sides
 * alternate in chunks (raw, port, raw, port...) so that a burst of disk latency from elsewhere
 * on the machine lands on both rather than on one.
 */
async function measure(
  variant: Variant,
  appends: number,
  workloads: Workloads,
  store: SqliteEventStore,
  writer: RawLogWriter,
): Promise<{ subject: number; baseline: number }> {
  const raw = workloads.plan(variant, appends);
  const port = workloads.plan(variant, appends);
  appendRaw(writer, raw.seed);
  await appendThroughPort(store, port.seed);
  const chunk = Math.max(1, Math.round(CHUNK_EVENTS / variant.eventsPerAppend));
  let rawMs = 0;
  let portMs = 0;
  for (let from = 0; from < appends; from += chunk) {
    let elapsed = startTimer();
    appendRaw(writer, raw.steps.slice(from, from + chunk));
    rawMs += elapsed();
    elapsed = startTimer();
    await appendThroughPort(store, port.steps.slice(from, from + chunk));
    portMs += elapsed();
  }
  const events = appends * variant.eventsPerAppend;
  return { subject: events / (portMs / 1000), baseline: events / (rawMs / 1000) };
}

export const appendsSuite: Suite = {
  name: 'appends',
  description:
    `SqliteEventStore.append (new stream: no_stream; existing: numeric expected revision) vs raw better-sqlite3 inserts, ` +
    `same schema and pragmas, one transaction per append; 3,000 x 1 / 500 x 20 appends, interleaved in chunks, median of ${ROUNDS} rounds`,
  async run(progress: Progress): Promise<Row[]> {
    const temp = tempDir('appends');
    const layout = await adapterLayout(temp.file('layout.sqlite'));
    const store = SqliteEventStore.open(temp.file('subject.sqlite'));
    const writer = new RawLogWriter(openRawLog(temp.file('raw.sqlite'), layout));
    try {
      progress.log(`temp logs in ${temp.dir}; journal_mode=${layout.journalMode}, synchronous=FULL on both sides`);
      const workloads = new Workloads(payloadPool(500));
      for (const variant of VARIANTS) await measure(variant, Math.ceil(variant.appends * WARM_UP_FRACTION), workloads, store, writer);
      progress.log('warmed up');
      const samples = VARIANTS.map(() => ({ subject: [] as number[], baseline: [] as number[] }));
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [index, variant] of VARIANTS.entries()) {
          const result = await measure(variant, variant.appends, workloads, store, writer);
          samples[index].subject.push(result.subject);
          samples[index].baseline.push(result.baseline);
        }
        const summary = VARIANTS.map((variant, index) => {
          const last = samples[index];
          return `${variant.label} ${(last.subject[round - 1] / last.baseline[round - 1]).toFixed(2)}x`;
        });
        progress.log(`round ${round}/${ROUNDS}, port/raw: ${summary.join('; ')}`);
      }
      return VARIANTS.map((variant, index) => ({
        benchmark: `appends: ${variant.label}`,
        measure: 'events/s',
        value: median(samples[index].subject),
        baseline: median(samples[index].baseline),
        target: { kind: 'ratio-at-least', ratio: TARGET_RATIO },
      }));
    } finally {
      await store.close();
      writer.close();
      temp.remove();
    }
  },
};
