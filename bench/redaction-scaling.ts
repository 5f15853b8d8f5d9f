/**
 * How redaction scales: output of 1, 4 and 16 MiB against 1 to 200 secrets (each with its ~20
 * encoded forms). Standalone, not a suite: `npx tsc -p tsconfig.bench.json && node
 * dist-bench/bench/redaction-scaling.js`. The time should grow with the output, not the secrets.
 */
import { randomBytes } from 'node:crypto';
import { Redactor } from '#trial-runner';

const LINE = 'lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789 ABCDEF /+=%\n';

for (const count of [1, 10, 50, 200]) {
  const secrets = Array.from({ length: count }, () => randomBytes(18).toString('base64'));
  const redactor = new Redactor(secrets);
  for (const mebibytes of [1, 4, 16]) {
    const filler = LINE.repeat(Math.ceil((mebibytes * 1024 * 1024) / LINE.length));
    // Flat, as output decoded from a Buffer is.
    const text = Buffer.from(`${filler.slice(0, 1000)}${secrets[0]}${filler.slice(1000)}`).toString('utf8');
    const started = process.hrtime.bigint();
    const redacted = redactor.redact(text);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    console.log(`secrets=${count} output=${mebibytes} MiB: ${ms.toFixed(0)} ms${redacted.includes('[redacted]') ? '' : ' (MISSED)'}`);
  }
}
