import { OutputCollector, Redactor } from './captured-output';

const SECRET = 'topsecretvalue';
/** Longer than `[redacted]`: each one redacted shortens the text, shifting every later byte. */
const LONG_SECRET = `LONGSECRET${'Q'.repeat(30)}`;
/** Longer than the cap: a run of them redacted shortens the kept text by far more than a margin. */
const HUGE_SECRET = `HUGESECRET${'Z'.repeat(290)}`;

/** Pushes the output in small chunks, as a pipe delivers it, so the collector lets go of the middle. */
function collect(output: string, capBytes: number, redactor: Redactor, chunkBytes = 5) {
  const collector = new OutputCollector(capBytes, 0, redactor.longestSecretBytes);
  const bytes = Buffer.from(output);
  for (let at = 0; at < bytes.length; at += chunkBytes) collector.push(bytes.subarray(at, at + chunkBytes));
  return collector.finish(redactor);
}

/** Every 4-byte piece of the secret: none may be visible, whole or cut. */
function piecesOf(secret: string): string[] {
  return Array.from({ length: secret.length - 3 }, (_, at) => secret.slice(at, at + 4));
}

describe('captured output: the start and the end of a long output', () => {
  it('keeps the first and the last half of the cap, with how much was cut between them', () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const { output, truncated } = collect(lines, 64, new Redactor([]), 100);
    const cut = Buffer.byteLength(lines) - 64;
    expect(truncated).toBe(true);
    expect(output).toBe(`${lines.slice(0, 32)}\n[… ${cut} bytes cut …]\n${lines.slice(-32)}`);
  });

  it('keeps an output within the cap whole', () => {
    expect(collect('short output\n', 64, new Redactor([]))).toEqual({ output: 'short output\n', truncated: false });
  });

  it('redacts a secret straddling the cut whole before cutting', () => {
    const output = `${'x'.repeat(27)}${SECRET}${'y'.repeat(300)}`;
    const shown = collect(output, 64, new Redactor([SECRET])).output;
    expect(shown.startsWith(`${'x'.repeat(27)}[reda\n[…`)).toBe(true);
    for (const piece of piecesOf(SECRET)) expect(shown).not.toContain(piece);
  });

  it.each([
    ['plain filler', 'x'],
    ['filler of nothing but longer secrets', LONG_SECRET],
    ['filler of nothing but secrets longer than the cap', HUGE_SECRET],
  ])('never shows part of a secret, wherever it falls (%s)', (_name, unit) => {
    const redactor = new Redactor([SECRET, LONG_SECRET, HUGE_SECRET]);
    const filler = unit.repeat(Math.ceil(3000 / unit.length));
    for (let at = 0; at <= 600; at += 1) {
      // Whole units before the secret and padding up to `at`: the longer secrets stay whole.
      const before = unit.repeat(Math.floor(at / unit.length)) + 'x'.repeat(at % unit.length);
      const { output } = collect(before + SECRET + filler, 64, redactor);
      for (const piece of [...piecesOf(SECRET), ...piecesOf(LONG_SECRET), ...piecesOf(HUGE_SECRET)]) {
        if (output.includes(piece)) throw new Error(`"${piece}" is visible with the secret at ${at}: ${JSON.stringify(output)}`);
      }
    }
  });

  it('still keeps the end of the output for reading usage', () => {
    const collector = new OutputCollector(64, 1000);
    const output = Array.from({ length: 2000 }, (_, i) => `${i}\n`).join('');
    for (let at = 0; at < output.length; at += 10) collector.push(Buffer.from(output.slice(at, at + 10)));
    expect(collector.keptText().endsWith(output.slice(-1000))).toBe(true);
    expect(collector.keptText().startsWith(output.slice(0, 32))).toBe(true);
  });
});
