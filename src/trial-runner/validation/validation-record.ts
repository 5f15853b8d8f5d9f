import type { Capture } from '../contract';
import type { Redactor } from '../output/captured-output';

/**
 * The spec's Validation record, and the bounds of what it keeps. A validator is code the case
 * wrote: whatever it prints, returns or logs is kept only up to these bounds, cut head and tail
 * like a command's output (the end of a long text often says what went wrong).
 */
export type { Capture, Judgment, JudgmentUsage, ValidationCall, ValidationLog, ValidationRecord, ValidationStatus } from '../contract';

/** Characters of one capture; `capture: true` raises it (for input and output, kept then). */
export const CAPTURE_CHARS = 16_000;
export const FULL_CAPTURE_CHARS = 64_000;
export const MAX_CALLS = 64;
export const MAX_LOGS = 64;

export const omitted = (): Capture => ({ text: '', format: 'text', state: 'omitted', truncated: false });
export const empty = (): Capture => ({ text: '', format: 'text', state: 'empty', truncated: false });

/** A text kept up to `limit` characters, redacted: its head and tail with a marker between. */
export function textCapture(text: string | null | undefined, redactor: Redactor, limit = CAPTURE_CHARS, format: Capture['format'] = 'text'): Capture {
  if (text === null || text === undefined || text === '') return empty();
  const shown = redactor.redact(text);
  if (shown.length <= limit) return { text: shown, format, state: 'captured', truncated: false };
  const half = Math.floor(limit / 2);
  const cut = shown.length - 2 * half;
  return {
    text: `${shown.slice(0, half)}\n[… ${cut} characters cut …]\n${shown.slice(shown.length - half)}`,
    format: 'text',
    state: 'captured',
    truncated: true,
  };
}

/** A value as JSON, kept like a text; undefined is empty. */
export function jsonCapture(value: unknown, redactor: Redactor, limit = CAPTURE_CHARS): Capture {
  if (value === undefined) return empty();
  let json: unknown;
  try {
    // undefined for a function or a symbol: nothing to show.
    json = JSON.stringify(value, null, 2);
  } catch {
    json = '[a value JSON cannot represent]';
  }
  return textCapture(typeof json === 'string' ? json : '', redactor, limit, 'json');
}
