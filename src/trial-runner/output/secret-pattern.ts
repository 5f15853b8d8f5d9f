const BASE = 0x01000193;
/** The filter holds 2^n bits: about 2^LOG2_BITS_PER_FORM (1,024) a form, so a false hit about once in a thousand characters, within these bounds. */
const MIN_FILTER_BITS = 10;
const MAX_FILTER_BITS = 20;
const LOG2_BITS_PER_FORM = 10;

/**
 * Finds every form of every secret in one pass over the output (a trial with many secrets has
 * hundreds of forms, and redaction reads every byte a trial prints): a Rabin-Karp scan of the
 * text's first-`width` characters against the forms' own, through a bit filter, with a
 * comparison only where the filter says a form may start. Linear in the text, whatever the
 * number of forms; a regular expression of hundreds of alternatives was fifty times slower.
 */
export class SecretPattern {
  private readonly forms: readonly string[];
  /** How many leading characters the rolling hash covers: the shortest form's length. */
  private readonly width: number;
  private readonly candidates = new Map<number, string[]>();
  /**
   * One bit per hash prefix that some form starts with. Sized by the forms: a trial without
   * secrets (most) builds none, one with a key a few hundred bytes, not 128 KiB zeroed per trial.
   */
  private readonly filter: Uint8Array;
  /** How far a hash is shifted right to give its filter bit's index: 32 less the filter's bits. */
  private readonly shift: number;
  /** BASE to the power width - 1: what the character leaving the window weighed. */
  private readonly leaving: number;

  constructor(forms: readonly string[]) {
    this.forms = [...new Set(forms)].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
    // With no form the width is 1 and nothing is ever looked for (replace returns at once).
    this.width = this.forms.length === 0 ? 1 : Math.min(...this.forms.map((form) => form.length));
    this.leaving = power(BASE, this.width - 1);
    const filterBits = Math.min(MAX_FILTER_BITS, Math.max(MIN_FILTER_BITS, Math.ceil(Math.log2(this.forms.length + 1)) + LOG2_BITS_PER_FORM));
    this.shift = 32 - filterBits;
    this.filter = new Uint8Array(this.forms.length === 0 ? 0 : 1 << (filterBits - 3));
    // Longest first in each bucket, so the first form found at a position is the longest there.
    for (const form of this.forms) {
      const hash = hashOf(form, this.width);
      const bucket = this.candidates.get(hash);
      if (bucket) bucket.push(form);
      else this.candidates.set(hash, [form]);
      this.filter[hash >>> (this.shift + 3)] |= 1 << ((hash >>> this.shift) & 7);
    }
  }

  get longestFormBytes(): number {
    return Math.max(0, ...this.forms.map((form) => Buffer.byteLength(form)));
  }

  /**
   * Replaces each stretch covered by occurrences of forms with one `replacement`. Occurrences
   * that overlap (a form starting inside another) are merged, so no part of either survives.
   */
  replace(text: string, replacement: string): string {
    if (this.forms.length === 0 || text.length < this.width) return text;
    const spans = new SpanWriter(text, replacement);
    const { width, leaving, filter, shift } = this;
    let hash = hashOf(text, width);
    for (let start = 0; ; start += 1) {
      if ((filter[hash >>> (shift + 3)] & (1 << ((hash >>> shift) & 7))) !== 0) {
        const form = this.candidates.get(hash)?.find((candidate) => text.startsWith(candidate, start));
        if (form !== undefined) spans.cover(start, start + form.length);
      }
      if (start + width >= text.length) break;
      hash = (Math.imul(hash - Math.imul(text.charCodeAt(start), leaving), BASE) + text.charCodeAt(start + width)) >>> 0;
    }
    return spans.finish();
  }
}

/** Builds the text with each merged stretch of occurrences replaced. */
class SpanWriter {
  private result = '';
  private copied = 0;
  private spanStart = -1;
  private spanEnd = -1;

  constructor(
    private readonly text: string,
    private readonly replacement: string,
  ) {}

  cover(start: number, end: number): void {
    if (start < this.spanEnd) {
      this.spanEnd = Math.max(this.spanEnd, end);
      return;
    }
    this.flush();
    this.spanStart = start;
    this.spanEnd = end;
  }

  finish(): string {
    if (this.spanEnd < 0) return this.text;
    this.flush();
    return this.result + this.text.slice(this.copied);
  }

  private flush(): void {
    if (this.spanEnd < 0) return;
    this.result += this.text.slice(this.copied, this.spanStart) + this.replacement;
    this.copied = this.spanEnd;
  }
}

/** The polynomial hash of the first `width` characters, modulo 2^32. */
function hashOf(text: string, width: number): number {
  let hash = 0;
  for (let index = 0; index < width; index += 1) hash = (Math.imul(hash, BASE) + text.charCodeAt(index)) >>> 0;
  return hash;
}

function power(base: number, exponent: number): number {
  let result = 1;
  for (let index = 0; index < exponent; index += 1) result = Math.imul(result, base) >>> 0;
  return result;
}
