import { Redactor } from './captured-output';

const SECRET = 'sk/live+Key=9&x?y z~ü';
const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

/** What each common encoder prints: none of it may survive redaction, nor 6 characters of it in a row. */
const encodings: Array<[string, string]> = [
  ['plain', SECRET],
  ['base64', base64(SECRET)],
  ['base64 after 1 byte', base64(`x${SECRET}`)],
  ['base64 after 2 bytes', base64(`xy${SECRET}`)],
  ['base64url after 1 byte', Buffer.from(`x${SECRET}`).toString('base64url')],
  ['base64url after 2 bytes', Buffer.from(`xy${SECRET}`).toString('base64url')],
  ['encodeURIComponent', encodeURIComponent(SECRET)],
  ['percent, lower hex', encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())],
  ['form encoding', new URLSearchParams({ k: SECRET }).toString().slice(2)],
  ['every byte escaped', hex(SECRET).replace(/(..)/g, '%$1').toUpperCase()],
  ['hex', hex(SECRET)],
  ['HEX', hex(SECRET).toUpperCase()],
  ['reversed', Array.from(SECRET).reverse().join('')],
];

describe('Redactor: a secret and its common encodings', () => {
  const redactor = new Redactor([SECRET]);

  it.each(encodings)('replaces the %s form', (_name, form) => {
    const redacted = redactor.redact(`before ${form} after`);
    expect(redacted).toContain('[redacted]');
    expect(redacted.startsWith('before ')).toBe(true);
    expect(redacted.endsWith(' after')).toBe(true);
    expect(redacted).not.toContain(form);
    // At most the base64 characters that mix the secret's bits with its neighbours' remain.
    const left = redacted.slice('before '.length, -' after'.length).replace('[redacted]', '');
    expect(left.length).toBeLessThanOrEqual(4);
  });

  it('replaces the secret inside the base64 of a longer value, keeping the rest', () => {
    const encoded = base64(`Authorization: Bearer ${SECRET} trailing`);
    const redacted = redactor.redact(encoded);
    expect(redacted.startsWith(base64('Authorization: Bearer').slice(0, 24))).toBe(true);
    // The secret's bytes take 4/3 as many characters: all but the 2 that mix in a neighbour's bits are gone.
    const secretChars = (Buffer.byteLength(SECRET) * 4) / 3;
    expect(redacted.replace('[redacted]', '').length).toBeLessThanOrEqual(encoded.length - secretChars + 2);
  });

  it('leaves other output alone and replaces overlapping secrets as one stretch', () => {
    const two = new Redactor(['abcdefgh12', '12345678zz']);
    expect(two.redact('x abcdefgh12345678zz y')).toBe('x [redacted] y');
    expect(two.redact('nothing to see here')).toBe('nothing to see here');
  });

  it('replaces a value of 4 to 7 characters only as itself, and one under 4 not at all', () => {
    const short = new Redactor(['abcde', 'xy']);
    expect(short.redact('abcde edcba xy')).toBe('[redacted] edcba xy');
  });

  it('counts the longest encoded form in longestSecretBytes, so the output collector keeps room for it at a cut', () => {
    expect(redactor.longestSecretBytes).toBeGreaterThanOrEqual(3 * Buffer.byteLength(SECRET));
  });

  it('finds forms in a long output with many secrets', () => {
    const secrets = Array.from({ length: 100 }, (_, index) => `secret-value-${index}-${'q'.repeat(index % 7)}`);
    const many = new Redactor(secrets);
    const text = `${'filler '.repeat(20000)}${base64(`:${secrets[42]}`)} ${encodeURIComponent(secrets[99])}`;
    const redacted = many.redact(text);
    expect(redacted.endsWith('[redacted] [redacted]') || /\[redacted\]..? \[redacted\]$/.test(redacted)).toBe(true);
  });
});

describe('Redactor without secrets', () => {
  it('is built and leaves output as it is', () => {
    expect(new Redactor([]).redact('anything at all')).toBe('anything at all');
  });
});
