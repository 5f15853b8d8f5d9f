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

  /** Drops a trailing partial secret (the start of a form cut off where we stopped keeping output). */
  dropPartialSecretAtEnd(text: string): string {
    return text.slice(0, this.pattern.partialFormStart(text));
  }
}

export class OutputCollector {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  totalBytes = 0;

  constructor(
    private readonly headLimit: number,
    private readonly tailLimit: number,
  ) {}

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
    if (this.tailLimit > 0) this.pushTail(chunk);
  }

  private pushTail(chunk: Buffer): void {
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tailBytes - this.tail[0].length >= this.tailLimit) this.tailBytes -= this.tail.shift()!.length;
  }

  get overflowed(): boolean {
    return this.totalBytes > this.headBytes;
  }

  /** Everything kept, head then tail: for reading usage, not for display. */
  keptText(): string {
    return Buffer.concat([...this.head, ...this.tail]).toString('utf8');
  }

  /** The display form: redacted, then capped at `capBytes` on a character boundary. */
  finish(redactor: Redactor, capBytes: number): { output: string; truncated: boolean } {
    let text = redactor.redact(Buffer.concat(this.head).toString('utf8'));
    if (this.overflowed) text = redactor.dropPartialSecretAtEnd(text.replace(/\uFFFD$/, ''));
    const capped = capUtf8(text, capBytes);
    return { output: capped, truncated: this.overflowed || capped.length < text.length };
  }
}

/** Keeps at most `capBytes` of UTF-8, never splitting a character. */
export function capUtf8(text: string, capBytes: number): string {
  if (text.length * 3 <= capBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= capBytes) return text;
  let end = capBytes;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

/** One line of at most 240 characters, redacted: the form of a trial's `failure`. */
export function failureLine(text: string, redactor: Redactor): string {
  const line = redactor.redact(text).replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return line.length <= 240 ? line : `${line.slice(0, 239)}…`;
}
