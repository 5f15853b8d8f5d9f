import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { startFakeProvider } from '../support/fake-provider';
import { acmeServerPerSuite, CLI, INIT_KEY, ROOT, tempDir, TEST_CONSENT_CONFIG } from '../support/servers';

const EXAMPLES = path.join(ROOT, 'examples');
const JUDGE_KEY = 'sk-ant-example-judge-key-4e1f';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  batch: any;
}

/** The runs of a batch as `[case, model, [trial statuses]]`. */
const outcomes = (batch: any) => batch.runs.map((run: any) => [run.case.id, run.variant.model, run.trials.map((trial: any) => trial.status)]);

/**
 * The suites of examples/, each run as the examples' README says: `assay eval --local` from the
 * compiled CLI as a child process, against a real server over HTTP. The judged one's judge is the
 * test's fake provider, put in place of the real one in the example's own ASSAY_CONFIG.
 */
describe('the examples', () => {
  const suite = acmeServerPerSuite();

  const evalLocal = (suiteFile: string, extra: Record<string, string> = {}) =>
    new Promise<Ran>((resolve) => {
      const out = tempDir('assay-examples-');
      const json = path.join(out, 'batch.json');
      const env = {
        PATH: process.env.PATH ?? '',
        ASSAY_URL: suite.server.url,
        ASSAY_API_KEY: INIT_KEY,
        ASSAY_CONFIG: TEST_CONSENT_CONFIG,
        TMPDIR: out,
        ...extra,
      };
      const child = spawn(process.execPath, [CLI, 'eval', '--local', path.join(EXAMPLES, suiteFile), '--no-progress', '--json', json], {
        cwd: out,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr, batch: fs.existsSync(json) ? JSON.parse(fs.readFileSync(json, 'utf8')) : null }));
    });

  it('fix-a-failing-test: both agents make the test pass, and the validator fails the one that changed the test', async () => {
    const { code, stdout, batch } = await evalLocal('fix-a-failing-test/suite.yaml');
    expect(code).toBe(1);
    expect(outcomes(batch)).toEqual([
      ['fix-slugify', 'careful-agent', ['passed', 'passed', 'passed']],
      ['fix-slugify', 'sloppy-agent', ['failed', 'failed', 'failed']],
    ]);
    const sloppy = batch.runs[1].trials[0];
    expect(sloppy.verifySteps).toEqual([expect.objectContaining({ command: 'node --test', exitCode: 0 })]);
    expect(sloppy.validations).toEqual([expect.objectContaining({ status: 'failed', message: 'the agent changed what test/slug.test.js expects' })]);
    expect(stdout).toMatch(/✗ fix-slugify on command\/sloppy-agent/);
    // The run keeps the validator as its author wrote it, beside the bundle that ran.
    const written = fs.readFileSync(path.join(EXAMPLES, 'fix-a-failing-test', 'checks', 'test-untouched.mjs'), 'utf8');
    expect(batch.runs[0].setup.validatorFiles).toEqual([{ path: './checks/test-untouched.mjs', content: written }]);
    expect(batch.runs[0].setup.validator).not.toBe(written);
  });

  it('conversation: the scripted user sends its two replies, the agent keeps the list across the turns', async () => {
    const { code, batch } = await evalLocal('conversation/suite.yaml');
    expect(code).toBe(0);
    expect(outcomes(batch)).toEqual([['grow-a-list', 'list-keeper', ['passed', 'passed', 'passed']]]);
    const trial = batch.runs[0].trials[0];
    expect(trial).toMatchObject({ turns: 3, endReason: 'replies-exhausted' });
    const said = trial.trajectory.filter((entry: any) => entry._tag === 'message').map((entry: any) => [entry.role, entry.text.trim()]);
    expect(said).toEqual([
      ['user', 'Start a shopping list in list.txt with milk, eggs'],
      ['agent', 'Turn 1 done. The list: milk,eggs'],
      ['user', 'Add bread.'],
      ['agent', 'Turn 2 done. The list: milk,eggs,bread'],
      ['user', 'Now sort the list.'],
      ['agent', 'Turn 3 done. The list: bread,eggs,milk'],
    ]);
  });

  it("judged: the example's ASSAY_CONFIG judge reads the rubric and WELCOME.md, and its choice decides", async () => {
    const fake = await startFakeProvider();
    try {
      // The example's own configuration, its provider pointed at the fake and trials allowed without bubblewrap.
      const config = parse(fs.readFileSync(path.join(EXAMPLES, 'judged/assay-config.yaml'), 'utf8'));
      config.providers.claude.baseURL = fake.anthropicURL;
      config.allowUnsandboxed = true;
      const configFile = path.join(tempDir('assay-examples-config-'), 'assay-config.yaml');
      fs.writeFileSync(configFile, stringify(config));
      const env = { ASSAY_CONFIG: configFile, ANTHROPIC_API_KEY: JUDGE_KEY };

      fake.answer({ object: { choice: 'welcoming', reason: 'Warm, short, and it names where to start.' }, usage: { input: 900, output: 40 } });
      const welcomed = await evalLocal('judged/suite.yaml', env);
      expect(welcomed.code).toBe(0);
      expect(outcomes(welcomed.batch)).toEqual([['welcome-note', 'none', ['passed']]]);
      expect(welcomed.batch.runs[0].trials[0].validations).toEqual([
        expect.objectContaining({ status: 'passed', judgment: expect.objectContaining({ choice: 'welcoming', model: 'claude-sonnet-4-5', score: 1 }) }),
      ]);
      const [asked] = fake.requests;
      expect(asked).toMatchObject({
        protocol: 'anthropic',
        headers: expect.objectContaining({ 'x-api-key': JUDGE_KEY }),
        body: { model: 'claude-sonnet-4-5' },
      });
      expect(JSON.stringify(asked.body)).toContain('tell them where to start');
      expect(JSON.stringify(asked.body)).toContain('good first issue'); // WELCOME.md, as the agent wrote it

      fake.answer({ object: { choice: 'lukewarm', reason: 'Polite, not warm.' }, usage: { input: 900, output: 40 } });
      const lukewarm = await evalLocal('judged/suite.yaml', env);
      expect(lukewarm.code).toBe(1);
      expect(outcomes(lukewarm.batch)).toEqual([['welcome-note', 'none', ['failed']]]);
    } finally {
      await fake.close();
    }
  });
});
