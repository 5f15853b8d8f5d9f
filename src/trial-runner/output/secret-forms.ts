/**
 * The forms a secret takes when a process encodes it before printing it: what the Redactor
 * looks for besides the value itself. Each form is a literal string, so one combined pattern
 * finds them all in a single pass over the output.
 *
 * Caught: the value; base64 and base64url in the three alignments (the secret after 0, 1 or 2
 * bytes of other data, as inside a longer encoded string), taking only the characters that
 * depend on the secret's bytes alone; percent-encoding as the common encoders write it (RFC 3986
 * unreserved kept, encodeURIComponent, `/` kept, form encoding, every byte escaped), upper and
 * lower hex digits; hex, lower and upper case; and the value reversed (by character).
 * Not caught (decision record 0032): parts of a secret (halves, every other character), an encoding
 * broken across lines (base64 wrapped at 76 columns, `xxd -p` at 60, `od` rows), hex with
 * separators, other encodings (base32, ROT13, UTF-16, JSON \u escapes of every character),
 * compression, encryption, and output printed one character per line.
 */

import { MIN_SECRET_VALUE_LENGTH } from '#shared/secret-values';

/** Below this many characters a secret is only replaced as itself (older stored values: new ones are refused). */
export const MIN_ENCODED_SECRET_LENGTH = MIN_SECRET_VALUE_LENGTH;

export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  if (secret.length >= MIN_ENCODED_SECRET_LENGTH) {
    const bytes = Buffer.from(secret, 'utf8');
    const hex = bytes.toString('hex');
    for (const form of [...base64Forms(bytes), ...percentForms(bytes), hex, hex.toUpperCase(), Array.from(secret).reverse().join('')]) {
      forms.add(form);
    }
  }
  return [...forms];
}

/**
 * With `offset` bytes before it, the secret's bits start at bit 8·offset of the encoded stream:
 * base64 characters that lie wholly inside its bits are the same whatever surrounds it.
 */
function base64Forms(bytes: Buffer): string[] {
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const inner = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    forms.push(inner, inner.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** Which characters each common encoder leaves as they are. */
const PERCENT_STYLES: Array<{ keeps: (char: string) => boolean; spaceAsPlus: boolean }> = [
  { keeps: (char) => UNRESERVED.test(char), spaceAsPlus: false },
  { keeps: (char) => UNRESERVED.test(char) || "!'()*".includes(char), spaceAsPlus: false },
  { keeps: (char) => UNRESERVED.test(char) || char === '/', spaceAsPlus: false },
  { keeps: (char) => /[A-Za-z0-9\-._*]/.test(char), spaceAsPlus: true },
  { keeps: () => false, spaceAsPlus: false },
];

function percentForms(bytes: Buffer): string[] {
  const forms: string[] = [];
  for (const { keeps, spaceAsPlus } of PERCENT_STYLES) {
    let upper = '';
    let lower = '';
    for (const byte of bytes) {
      const char = byte < 0x80 ? String.fromCharCode(byte) : '';
      if (char !== '' && keeps(char)) {
        upper += char;
        lower += char;
      } else if (char === ' ' && spaceAsPlus) {
        upper += '+';
        lower += '+';
      } else {
        const escaped = byte.toString(16).padStart(2, '0');
        upper += `%${escaped.toUpperCase()}`;
        lower += `%${escaped}`;
      }
    }
    forms.push(upper, lower);
  }
  return forms;
}
