/**
 * An organization's events on EventStoreDB, which indexes no metadata: found through the
 * organization's chain stream instead of a scan of `$all`. Every append of the organization's
 * events first claims the chain with a claim naming the stream it goes to (chained-appends.ts),
 * so the chain stream lists the organization's streams in `$all` order of their first claim.
 * A read walks those claims from the last one at or before its cursor and reads each named
 * stream whole, so that events written into those streams around the adapter are read too (and
 * `audit.verify` reports them). Its cost follows the organization's own events: a bisection of
 * the chain stream for the cursor, one read per thousand claims, one per stream, up to the page
 * asked for; never the rest of the log.
 */
import { categoryOf } from '../event-store.port';
import type { AuditedEvent, OrganizationReadOptions, RecordedEvent } from '../event-store.port';
import { matchesOrganizationRead } from '../organization-filter';
import { CHAIN_CLAIMED, ChainClaim, chainStreamOf } from './organization-chain';

/** What the reads need of the adapter. */
export interface OrganizationReadIo {
  /** Events of a stream from a revision, up to a count ([] when it does not exist). */
  readStream(stream: string, fromRevision: number, maxCount?: number): Promise<AuditedEvent[]>;
  /** The stream's last event, undefined when it does not exist. */
  readLast(stream: string): Promise<RecordedEvent | undefined>;
  /** Domain events of `$all` after a position, forwards, up to a count (the server's and the chain's streams left out on the server). */
  readAll(after: number | undefined, maxCount: number): Promise<AuditedEvent[]>;
  /** The position of the first event of any organization's chain stream, undefined when there is none. */
  firstChainPosition(): Promise<number | undefined>;
}

const CHAIN_PAGE = 1_000;
const ALL_PAGE = 500;
/** The first page of a scan bounded by a position: the server cannot stop at a position, only after a count. */
const FIRST_SCAN_PAGE = 32;
/** Streams read at once. */
const STREAMS_AT_ONCE = 16;

/** The first `maxCount` events by position, whatever order they come in; each position once. */
class FirstByPosition {
  readonly events: AuditedEvent[] = [];

  constructor(private readonly maxCount: number) {}

  get full(): boolean {
    return this.events.length >= this.maxCount;
  }

  /** Whether nothing at or after `position` can be among the first. */
  closedBefore(position: number): boolean {
    return this.full && this.events[this.events.length - 1].position < position;
  }

  add(event: AuditedEvent): void {
    if (this.full && event.position >= this.events[this.events.length - 1].position) return;
    let [low, high] = [0, this.events.length];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.events[middle].position < event.position) low = middle + 1;
      else high = middle;
    }
    if (this.events[low]?.position === event.position) return;
    this.events.splice(low, 0, event);
    if (this.events.length > this.maxCount) this.events.pop();
  }
}

export class OrganizationReads {
  /** Where the first chain began: organizations' events before it were stored unchained, and only a scan finds them. */
  private chainsBegan: number | undefined;

  constructor(private readonly io: OrganizationReadIo) {}

  async read(options: OrganizationReadOptions): Promise<AuditedEvent[]> {
    if (options.maxCount <= 0) return [];
    const chain = chainStreamOf(options.organization);
    const last = await this.io.readLast(chain);
    // No chain stream: nothing stored since the chain began, or the stream was deleted (audit.verify reports that).
    if (!last) return this.scan(options, Number.POSITIVE_INFINITY);
    const from = options.after === undefined ? 0 : await this.lastClaimAtOrBefore(chain, options.after, last);
    const firstClaims = await this.io.readStream(chain, from, CHAIN_PAGE);
    const found = new FirstByPosition(options.maxCount);
    const began = await this.chainBegan();
    if (options.after === undefined || options.after < began) for (const event of await this.scan(options, began)) found.add(event);
    const named = new Set<string>();
    let pending: string[] = [];
    const readPending = async () => {
      const read = await Promise.all(pending.map((stream) => this.io.readStream(stream, 0)));
      for (const event of read.flat()) if (matchesOrganizationRead(event, options)) found.add(event);
      pending = [];
    };
    for (let claims = firstClaims, revision = 0; claims.length > 0;) {
      for (const claimed of claims) {
        // A stream first claimed here holds the organization's events only after this position.
        if (found.closedBefore(claimed.position)) return (await readPending(), found.events);
        const stream = streamOf(claimed);
        if (stream === null || named.has(stream) || !this.wanted(stream, options)) continue;
        named.add(stream);
        pending.push(stream);
        if (pending.length >= STREAMS_AT_ONCE) await readPending();
      }
      if (claims.length < CHAIN_PAGE) break;
      revision += claims.length;
      claims = await this.io.readStream(chain, revision, CHAIN_PAGE);
    }
    await readPending();
    return found.events;
  }

  /**
   * Where a walk after `position` starts: the last chain event at or before it. Each claim's events
   * are stored after it and before the next claim, so the claims before that one name no event
   * after the position. Found by bisection of the chain stream's revisions, one event read each.
   */
  private async lastClaimAtOrBefore(chain: string, position: number, last: RecordedEvent): Promise<number> {
    if (last.position <= position) return last.revision;
    let [low, high] = [0, last.revision];
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      const event = (await this.io.readStream(chain, middle, 1)).at(0);
      if (event && event.position <= position) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  private wanted(stream: string, options: OrganizationReadOptions): boolean {
    if (options.stream !== undefined && stream !== options.stream) return false;
    return options.categories === undefined || options.categories.length === 0 || options.categories.includes(categoryOf(stream));
  }

  private async chainBegan(): Promise<number> {
    // Once found it never moves: the first chain event only goes if an administrator deletes its stream, and earlier is still right.
    this.chainsBegan ??= await this.io.firstChainPosition();
    return this.chainsBegan ?? Number.POSITIVE_INFINITY;
  }

  /** The organization's events of `$all` after the cursor and before `before`, a page at a time. */
  private async scan(options: OrganizationReadOptions, before: number): Promise<AuditedEvent[]> {
    const found: AuditedEvent[] = [];
    let after = options.after;
    // Pages grow from a small one, so that a scan of a few events before the bound reads few after it.
    for (let size = Number.isFinite(before) ? FIRST_SCAN_PAGE : ALL_PAGE; found.length < options.maxCount; size = Math.min(ALL_PAGE, size * 2)) {
      const page = await this.io.readAll(after, size);
      for (const event of page) {
        if (event.position >= before) return found;
        if (matchesOrganizationRead(event, options) && found.length < options.maxCount) found.push(event);
      }
      if (page.length < size) break;
      after = page[page.length - 1].position;
    }
    return found;
  }
}

function streamOf(event: RecordedEvent): string | null {
  if (event.type !== CHAIN_CLAIMED) return null;
  const { stream } = event.data as Partial<ChainClaim>;
  return typeof stream === 'string' ? stream : null;
}
