import { createHash, randomBytes } from 'node:crypto';

/**
 * Opaque, time-ordered ids with a readable prefix (`bat_…`, `run_…`, `key_…`): 12 hex digits
 * of milliseconds then 16 random hex digits, so ids sort by creation time.
 */
export type IdPrefix = 'bat' | 'run' | 'trl' | 'var' | 'con' | 'env' | 'key' | 'req' | 'lse' | 'val' | 'rsc';

/**
 * The time part of time-ordered ids: the milliseconds in 12 hex digits, and how many ids this
 * process made before in the same millisecond, which keeps its ids in the order it made them.
 */
class IdClock {
  private lastMillis = -1;
  private time = '';
  private sequence = 0;

  tick(now: number): { time: string; sequence: number } {
    if (now === this.lastMillis) this.sequence += 1;
    else {
      this.lastMillis = now;
      this.time = now.toString(16).padStart(12, '0');
      this.sequence = 0;
    }
    return { time: this.time, sequence: this.sequence };
  }
}

const prefixedIdClock = new IdClock();
const eventIdClock = new IdClock();

export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  const { time, sequence } = prefixedIdClock.tick(now);
  const seq = (sequence & 0xffff).toString(16).padStart(4, '0');
  return `${prefix}_${time}${seq}${randomHex(6)}`;
}

/** Random bytes drawn from a pool filled 4 KiB at a time: one system call per ~680 ids, not per id. */
let pool: Buffer = Buffer.alloc(0);
let offset = 0;

function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/**
 * The id of a new event: a UUID version 7 (RFC 9562), the milliseconds since the epoch, then a
 * counter within the millisecond (so one process's ids sort in the order it made them), then 62
 * random bits. The log's index of event ids then grows at its end, as the log does: random (v4)
 * ids put each insert on a random page of the index, which costs more as the log grows (a third
 * of the log's CPU a trial on a log of a million events: decision record 0005).
 */
export function newEventId(now: number = Date.now()): string {
  const { time, sequence } = eventIdClock.tick(now);
  const seq = (sequence & 0xfff).toString(16).padStart(3, '0');
  const random = randomHex(8);
  const variant = ((parseInt(random.slice(0, 1), 16) & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8)}-7${seq}-${variant}${random.slice(1, 4)}-${random.slice(4, 16)}`;
}

/**
 * A UUID derived from a name (SHA-1 based, version 5 layout), so that retrying the same
 * command appends events with the same ids, which the event store then ignores.
 */
export function derivedEventId(...parts: string[]): string {
  const bytes = createHash('sha1').update(parts.join('\u0000')).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
