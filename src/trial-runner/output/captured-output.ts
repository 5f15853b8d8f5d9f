/**
 * Output of a sandboxed command: kept in memory only up to what we can report (the cap plus
 * room to redact a secret that straddles it), plus an optional tail for reading usage. Secrets
 * are replaced after the chunks are joined, so a secret split across reads is still caught, and
 * before capping, so the cap can never cut a secret in half and leak its first part.
 */
import { SecretPattern } from './secret-pattern';
import { secretForms } from './secret-forms';

export const REDACTED = '[redacted]';
const MIN_SECRET_LENGTH = 4;

/**
 * Replaces secrets, and their common encodings (secret-forms.ts), with `[redacted]`. Values
 * under 4 characters are left alone (they would redact every "a"); values under 8 are replaced
 * only as themselves: new ones are refused on input, older stored ones still work.
 */
export class Redactor {
  private readonly pattern: SecretPattern;
  /** The longest form in UTF-8 bytes: what the collector keeps past its cap to redact a form that straddles it. */
  readonly longestSecretBytes: number;

  constructor(secrets: readonly string[]) {
    const kept = secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH);
    this.pattern = new SecretPattern(kept.flatMap(secretForms));
    this.longestSecretBytes = this.pattern.longestFormBytes;
  }

  redact(text: string): string {
    return this.pattern.replace(text, REDACTED);
  }
}

/** Kept past each cut beyond the longest secret: room for characters the cut splits. */
const CUT_SLACK_BYTES = 16;

/** What stands between the start and the end of an output too long to keep whole. */
export function cutMarker(bytes: number): string {
  return `\n[… ${bytes} bytes cut …]\n`;
}

/**
 * A command's output as it arrives, kept up to what can be reported: its start and its end, half
 * of `capBytes` each (a long build's error is at its end). Each half is kept with two margins of
 * the longest secret past its cut: a secret straddling the cut is then whole when redacted, and
 * the outer margin, dropped after redacting, takes with it whatever part of a secret the edge of
 * the kept bytes split (and leaves room for redaction shortening the text). `usageTailBytes`
 * keeps more of the end, for reading usage.
 */
export class OutputCollector {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  totalBytes = 0;
  private readonly marginBytes: number;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  constructor(
    private readonly capBytes: number,
    usageTailBytes = 0,
    longestSecretBytes = 0,
  ) {
    this.marginBytes = longestSecretBytes + CUT_SLACK_BYTES;
    this.headLimit = headHalf(capBytes) + 2 * this.marginBytes;
    this.tailLimit = Math.max(usageTailBytes, capBytes - headHalf(capBytes) + 2 * this.marginBytes);
  }

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    const roomInHead = this.headLimit - this.headBytes;
    if (roomInHead > 0) {
      const kept = chunk.length <= roomInHead ? chunk : chunk.subarray(0, roomInHead);
      this.head.push(kept);
      this.headBytes += kept.length;
      if (kept === chunk) return;
      chunk = chunk.subarray(roomInHead);
    }
    this.pushTail(chunk);
  }

  private pushTail(chunk: Buffer): void {
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tailBytes - this.tail[0].length >= this.tailLimit) {
      const dropped = this.tail.shift();
      if (!dropped) break;
      this.tailBytes -= dropped.length;
    }
  }

  /** Everything kept, head then tail: for reading usage, not for display. */
  keptText(): string {
    return Buffer.concat([...this.head, ...this.tail]).toString('utf8');
  }

  /**
   * The display form: redacted; past the cap, its first and last halves with a marker between,
   * which counts the bytes not shown (of the output as written, less what redaction changed).
   */
  finish(redactor: Redactor): { output: string; truncated: boolean } {
    if (this.totalBytes === this.headBytes + this.tailBytes) {
      // Nothing was let go: the whole output is redacted at once, then cut if still too long.
      const bytes = Buffer.from(redactor.redact(this.keptText()), 'utf8');
      if (bytes.length <= this.capBytes) return { output: bytes.toString('utf8'), truncated: false };
      const head = untilByte(bytes, headHalf(this.capBytes));
      // Counted in what the command wrote, unless redaction lengthened it (a short secret's marker).
      return { output: this.joined(head, fromByte(bytes, bytes.length - this.tailHalf), Math.max(this.totalBytes, bytes.length)), truncated: true };
    }
    return { output: this.joined(this.shownHead(redactor), this.shownTail(redactor), this.totalBytes), truncated: true };
  }

  /** The head redacted, less its outer margin, then cut to its half. */
  private shownHead(redactor: Redactor): string {
    const head = Buffer.from(redactor.redact(Buffer.concat(this.head).toString('utf8')), 'utf8');
    return capUtf8(untilByte(head, head.length - this.marginBytes), headHalf(this.capBytes));
  }

  /** The end of the tail with its two margins, redacted, less its outer margin, then cut to its half. */
  private shownTail(redactor: Redactor): string {
    const kept = Buffer.concat(this.tail);
    const end = kept.subarray(Math.max(0, kept.length - this.tailHalf - 2 * this.marginBytes));
    const redacted = Buffer.from(fromByte(Buffer.from(redactor.redact(end.toString('utf8')), 'utf8'), this.marginBytes), 'utf8');
    return fromByte(redacted, redacted.length - this.tailHalf);
  }

  private get tailHalf(): number {
    return this.capBytes - headHalf(this.capBytes);
  }

  private joined(head: string, tail: string, totalBytes: number): string {
    return head + cutMarker(totalBytes - Buffer.byteLength(head) - Buffer.byteLength(tail)) + tail;
  }
}

const headHalf = (capBytes: number) => Math.floor(capBytes / 2);

/** The text before byte `end`, moved back to the start of a character. */
function untilByte(bytes: Buffer, end: number): string {
  let at = Math.max(0, end);
  while (at > 0 && at < bytes.length && (bytes[at] & 0xc0) === 0x80) at -= 1;
  return bytes.subarray(0, at).toString('utf8');
}

/** The text from byte `start` on, moved forward to the start of a character. */
function fromByte(bytes: Buffer, start: number): string {
  let at = Math.max(0, start);
  while (at < bytes.length && (bytes[at] & 0xc0) === 0x80) at += 1;
  return bytes.subarray(at).toString('utf8');
}

/** Keeps at most `capBytes` of UTF-8, never splitting a character. */
export function capUtf8(text: string, capBytes: number): string {
  if (text.length * 3 <= capBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= capBytes) return text;
  return untilByte(bytes, capBytes);
}

/** One line of at most 240 characters, redacted: the form of a trial's `failure`. */
export function failureLine(text: string, redactor: Redactor): string {
  const line = redactor
    .redact(text)
    .replace(/\s*[\r\n]+\s*/g, ' ')
    .trim();
  return line.length <= 240 ? line : `${line.slice(0, 239)}…`;
}
