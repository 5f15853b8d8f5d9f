import { chainKeyIdOf, eventHash, EXPORT_CHAIN_START, nextExportHash } from '#shared/event-chain';

/** Where an export file stopped being what its trailer vouches for. */
export interface ExportBreak {
  line: number;
  reason: string;
}

/**
 * Checks an export line by line, without the server: every line but the last is an event, and
 * the last is `{"trailer": {count, chainHash}}` with h_n of the export chain
 * (h0 = 64 zeros, h_i = sha256_hex(h_{i-1} + canonical JSON of line i)).
 */
export class ExportChainCheck {
  private hash = EXPORT_CHAIN_START;
  private events = 0;
  private lineNumber = 0;
  private trailer: { count: unknown; chainHash: unknown; line: number } | null = null;
  private broken: ExportBreak | null = null;

  /** Feeds one line of the file; returns the break once there is one. */
  add(text: string): ExportBreak | null {
    this.lineNumber += 1;
    if (this.broken) return this.broken;
    if (text.trim() === '') return this.fail('An empty line: an export has none.');
    if (this.trailer) return this.fail(`A line after the trailer (line ${this.trailer.line}): the file was appended to.`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.fail('Not a JSON line.');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return this.fail('Not a JSON object.');
    const trailer = (parsed as { trailer?: { count?: unknown; chainHash?: unknown } }).trailer;
    if (trailer !== undefined) {
      this.trailer = { count: trailer.count, chainHash: trailer.chainHash, line: this.lineNumber };
      return null;
    }
    if (!matchesOwnHash(parsed)) return this.fail('The event does not match the hash the log gave it: the line was changed after the export.');
    this.hash = nextExportHash(this.hash, parsed);
    this.events += 1;
    return null;
  }

  /** After the last line: the first break, or null when the file is complete and unaltered. */
  finish(): { break: ExportBreak | null; events: number } {
    if (this.broken) return { break: this.broken, events: this.events };
    if (!this.trailer) return { break: { line: this.lineNumber, reason: 'No trailer line: the export is incomplete (cut short).' }, events: this.events };
    if (this.trailer.count !== this.events) {
      return {
        break: { line: this.trailer.line, reason: `The trailer counts ${String(this.trailer.count)} events but the file holds ${this.events}.` },
        events: this.events,
      };
    }
    if (this.trailer.chainHash !== this.hash) {
      return {
        break: {
          line: this.trailer.line,
          reason: 'The chain hash of the event lines does not match the trailer: a line was changed, removed, added or reordered.',
        },
        events: this.events,
      };
    }
    return { break: null, events: this.events };
  }

  private fail(reason: string): ExportBreak {
    this.broken = { line: this.lineNumber, reason };
    return this.broken;
  }
}

/** The members of an event line the log's own chain hash covers. */
interface ExportedEvent {
  id?: unknown;
  type?: unknown;
  stream?: unknown;
  revision?: unknown;
  data?: unknown;
  metadata?: unknown;
  time?: unknown;
  chain?: { prevHash?: unknown; hash?: unknown } | null;
}

/**
 * Each event line carries its link in the organization's chain: recomputing it pins the line that
 * changed. A keyed link needs the chain key, which a file checked offline has not: the file's own
 * chain still covers that line.
 */
function matchesOwnHash(event: ExportedEvent): boolean {
  if (event.chain === null || event.chain === undefined) return true;
  if (typeof event.chain.hash === 'string' && chainKeyIdOf(event.chain.hash) !== null) return true;
  const { id, type, stream, revision, data, metadata, time } = event;
  if (typeof id !== 'string' || typeof type !== 'string' || typeof stream !== 'string' || typeof revision !== 'number' || typeof time !== 'string')
    return false;
  const prevHash = typeof event.chain.prevHash === 'string' ? event.chain.prevHash : null;
  return eventHash({ id, type, streamName: stream, revision, data, metadata, createdAt: time }, prevHash) === event.chain.hash;
}
