import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acmeServerPerSuite, CLI, INIT_KEY, tempDir, TEST_CONSENT_CONFIG } from '../support/servers';

/** A suite file's `name` names its suite where batches are listed, unless the suite names itself. */
describe("a suite file's name", () => {
  const suite = acmeServerPerSuite();

  /** The CLI as a child process (not spawnSync: the server answers from this process). */
  const run = async (yaml: string) => {
    const dir = tempDir('assay-suite-name-');
    fs.writeFileSync(path.join(dir, 'suite.yaml'), yaml);
    const child = spawn(process.execPath, [CLI, 'eval', 'suite.yaml', '--no-progress'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', ASSAY_URL: suite.server.url, ASSAY_API_KEY: INIT_KEY, ASSAY_CONFIG: TEST_CONSENT_CONFIG, TMPDIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect([code, stderr]).toEqual([0, expect.any(String)]);
  };
  const body = (name: string, suiteName = '') => `name: ${name}
suite:
  id: named-by-file
${suiteName}  prompt: "Write hello into out.txt"
cases:
  - id: named-case
    verify: grep -q hello out.txt
variants:
  - harness: command
    model: none
    profile: { run: "echo hello > out.txt" }
trials: 1
`;

  it("names the batch's suite on the list; a suite name of its own wins", async () => {
    await run(body('Text kit checks'));
    let [latest] = (await suite.api.call('evals.batches.list', { limit: 1 })).body.batches;
    expect(latest.suite).toEqual({ id: 'named-by-file', name: 'Text kit checks' });
    await run(body('Text kit checks', '  name: The suite itself\n'));
    [latest] = (await suite.api.call('evals.batches.list', { limit: 1 })).body.batches;
    expect(latest.suite).toEqual({ id: 'named-by-file', name: 'The suite itself' });
  });
});
