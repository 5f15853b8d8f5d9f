import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fitsSession, StepEnd, StepOutput, stepFile } from './session-protocol';
import { TempDirs } from '../../../test/support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

const NONCE = '0123456789abcdef0123456789abcdef';

/** What the output was and how it ended, once the chunks are in (what was held back included). */
function split(chunks: string[]): { output: string; end: StepEnd | null } {
  let output = '';
  let end: StepEnd | null = null;
  const step = new StepOutput(
    NONCE,
    (chunk) => (output += chunk.toString('latin1')),
    (ended) => (end = ended),
  );
  chunks.forEach((chunk) => step.push(Buffer.from(chunk, 'latin1')));
  step.flush();
  return { output, end };
}

describe('a session step output', () => {
  it('ends at the end line, wherever the chunks cut it, and keeps all output before it', () => {
    const stream = `first line\nno newline at the end${NONCE} 3 clean\n`;
    for (let cut = 1; cut < stream.length; cut++) {
      expect(split([stream.slice(0, cut), stream.slice(cut)])).toEqual({ output: 'first line\nno newline at the end', end: { status: 3, stale: false } });
    }
    expect(split(stream.split(''))).toEqual({ output: 'first line\nno newline at the end', end: { status: 3, stale: false } });
  });

  it('treats a line of another nonce, or half of its own, as output', () => {
    const other = 'fedcba9876543210fedcba9876543210';
    const stream = `${other} 0 clean\n${NONCE.slice(0, 20)} 0 clean\n`;
    expect(split([stream])).toEqual({ output: stream, end: null });
  });

  it('reads a stale end and a workspace that could not be entered', () => {
    expect(split([`${NONCE} 0 stale\n`]).end).toEqual({ status: 0, stale: true });
    expect(split([`${NONCE} chdir clean\n`]).end).toEqual({ status: null, stale: false });
  });

  it('holds back only what could begin an end line, and hands it on when the command ends without one', () => {
    let output = '';
    const step = new StepOutput(
      NONCE,
      (chunk) => (output += chunk.toString()),
      () => undefined,
    );
    step.push(Buffer.from('short'));
    expect(output).toBe('');
    step.flush();
    expect(output).toBe('short');
  });
});

describe('a session step file', () => {
  it('gives the command exactly its variables and its text, read back by a real shell', () => {
    const env = { PLAIN: 'value', QUOTES: `it's "both" \\ $HOME $(echo no) \`echo no\``, LINES: 'one\ntwo\n', EMPTY: '' };
    const command = 'printf \'%s|\' "$PLAIN" "$QUOTES" "$LINES" "$EMPTY"; echo; env | grep ASSAY_SESSION_COMMAND || echo none\n\n';
    const file = path.join(dirs.make('assay-step-'), 'step.sh');
    writeFileSync(file, stepFile(command, env));
    const output = execFileSync('/bin/sh', ['-c', '. "$1" && exec /bin/sh -c "$ASSAY_SESSION_COMMAND"', 'assay-step', file], { env: {}, encoding: 'utf8' });
    expect(output).toBe(`value|${env.QUOTES}|one\ntwo\n||\nnone\n`);
  });

  it('is refused for what a shell would not carry unchanged: the command then gets a sandbox of its own', () => {
    expect(fitsSession('echo ok', { PATH: '/bin', MY_VAR: 'x' })).toBe(true);
    expect(fitsSession('echo \0', {})).toBe(false);
    expect(fitsSession('echo ok', { 'not-a-name': 'x' })).toBe(false);
    expect(fitsSession('echo ok', { UID: '5' })).toBe(false);
    expect(fitsSession('echo ok', { OPTIND: '5' })).toBe(false);
    expect(fitsSession('echo ok', { ASSAY_SESSION_COMMAND: 'x' })).toBe(false);
    expect(fitsSession('echo ok', { BIG: 'x'.repeat(128 * 1024) })).toBe(false);
    expect(fitsSession('x'.repeat(128 * 1024), {})).toBe(false);
    expect(fitsSession('echo ok', Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`V${i}`, 'x'.repeat(64 * 1024)])))).toBe(false);
  });
});
