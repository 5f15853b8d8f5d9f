import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { freePort, ROOT, tempDir } from '../support/servers';

/** The first sh block under a heading of a guide page, as a reader copies it. */
function snippetUnder(page: string, heading: string): string {
  const text = fs.readFileSync(path.join(ROOT, page), 'utf8');
  const section = text.slice(text.indexOf(`## ${heading}\n`));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error(`${page} has no sh block under "${heading}"`);
  return block[1];
}

/** The JSON object that starts where `start` is first printed in the text. */
function jsonAt(text: string, start: string): unknown {
  const from = text.indexOf(start);
  if (from < 0) throw new Error(`"${start}" was not printed:\n${text}`);
  for (let end = text.indexOf('}', from); end >= 0; end = text.indexOf('}', end + 1)) {
    try {
      return JSON.parse(text.slice(from, end + 1));
    } catch {
      // not the end of the object yet
    }
  }
  throw new Error(`No JSON object at "${start}":\n${text.slice(from)}`);
}

const missing = ['openssl', 'curl'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
if (missing.length > 0) process.stderr.write(`Skipping the headless set-up snippet: ${missing.join(' and ')} not on the PATH (the snippet uses them)\n`);
const itWithTools: jest.It = missing.length === 0 ? it : it.skip;

/**
 * The set-up page's headless snippet, pasted into bash in a checkout as written (only the port
 * changed to one free here, and the data directory set to a temporary one): `npm start` serves the
 * built tree, and the curl at its end is answered for the key the snippet made.
 */
describe('the headless set-up snippet', () => {
  const groups: number[] = [];
  afterAll(() => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already ended
      }
    }
  });

  itWithTools(
    'starts the server with a first key and answers whoami for it',
    async () => {
      const port = await freePort();
      const snippet = snippetUnder('docs/guide/setup.md', 'A first key for a headless set-up');
      expect(snippet).toContain('127.0.0.1:8080');
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: String(port),
        ASSAY_DATA_DIR: tempDir('assay-headless-data-'),
        TMPDIR: tempDir('assay-headless-tmp-'),
      };
      // The server the snippet leaves running in the background writes to the same output: a file, read once the shell exits.
      const output = path.join(env.TMPDIR, 'output.txt');
      const fd = fs.openSync(output, 'w');
      const child = spawn('bash', ['--noprofile', '--norc', '-e', '-c', snippet.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)], {
        cwd: ROOT,
        env,
        stdio: ['ignore', fd, fd],
        detached: true,
      });
      fs.closeSync(fd);
      groups.push(child.pid!);
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      const printed = fs.readFileSync(output, 'utf8');
      expect({ code, printed: code === 0 ? '' : printed }).toEqual({ code: 0, printed: '' });
      // whoami's answer, among the server's log lines (curl ends it with no newline).
      expect(jsonAt(printed, '{"organization":')).toMatchObject({
        organization: 'acme',
        kind: 'api_key',
        permissions: expect.arrayContaining(['evals:write', 'keys:admin']),
      });
    },
    180_000,
  );
});
