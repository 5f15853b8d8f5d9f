import * as fs from 'node:fs';
import * as path from 'node:path';
import { batchIdsIn, evalCli } from '../support/eval-cli';
import { acmeServerPerSuite, INIT_KEY, tempDir, TEST_CONSENT_CONFIG } from '../support/servers';

/** Verify that cannot run (exit 127) voids a trial: the machinery broke, not the agent. */
const CANNOT_RUN = 'the verify command could not run (exit 127, command not found)';

/**
 * Void trials measured nothing: `assay eval` says why they were void, exits 3 when no trial was
 * scored, and `--retry-void` runs the void ones again and merges them into the batch's result.
 */
describe('assay eval, void trials', () => {
  const suite = acmeServerPerSuite({ ASSAY_CONFIG: TEST_CONSENT_CONFIG });
  let dir: string;
  beforeEach(() => {
    dir = tempDir('assay-cli-void-');
  });
  const cli = evalCli({
    dir: () => dir,
    env: () => ({ ASSAY_URL: suite.server.url, ASSAY_API_KEY: INIT_KEY, ASSAY_CONFIG: TEST_CONSENT_CONFIG, TMPDIR: tempDir('assay-cli-tmp-') }),
  });
  const getBatch = async (id: string) => (await suite.api.call('evals.batches.get', { id })).body;
  const batchCount = async () => (await suite.api.call('evals.batches.list', { limit: 1 })).body.total as number;

  const twoCases = (id: string, verifyB: string) => `name: ${id}
suite: { id: ${id}, prompt: hi }
cases:
  - { id: ${id}-a, verify: exit 127 }
  - { id: ${id}-b, verify: ${verifyB} }
variants:
  - { harness: command, model: none, profile: { run: echo hello > out.txt } }
trials: 3
`;

  it('exits 3 when no trial was scored, under every --fail-on but never, and says why each trial was void', async () => {
    const file = cli.write('void.yaml', twoCases('all-void', 'exit 127'));
    const junit = path.join(dir, 'junit.xml');
    const failures = await cli.run([file, '--junit', junit]);
    expect(failures.code).toBe(3);
    expect(failures.stdout).toContain(`Void trials (6), by reason:\n  6 × ${CANNOT_RUN} (all-void-a, all-void-b)\n`);
    expect(failures.stdout).toContain('Nothing was measured: no trial was scored, so no gate can pass (exit 3 unless --fail-on never).');
    expect(fs.readFileSync(junit, 'utf8').match(/<error /g)).toHaveLength(2);
    expect((await cli.run([file, '--fail-on', 'strict'])).code).toBe(3);
    const never = await cli.run([file, '--fail-on', 'never']);
    expect(never.code).toBe(0);
    expect(never.stdout).toContain(`  6 × ${CANNOT_RUN} (all-void-a, all-void-b)`);
  });

  it('exits by the scored trials when one was scored, and still lists the void ones by reason', async () => {
    const file = cli.write('some.yaml', twoCases('some-void', 'grep -q hello out.txt'));
    const failures = await cli.run([file]);
    expect(failures.code).toBe(0);
    expect(failures.stdout).toContain(`Void trials (3), by reason:\n  3 × ${CANNOT_RUN} (some-void-a)\n`);
    expect(failures.stdout).not.toContain('Nothing was measured');
    // Not under the failing cases: the default gate does not fail on them.
    expect(failures.stdout).not.toContain('Failing cases:');
    expect((await cli.run([file, '--fail-on', 'strict'])).code).toBe(1);
  });

  /**
   * Case a is void on variant y while FLAKY is not "ok", case c on both variants, case b never:
   * the organization's environment decides, as a broken credential would.
   */
  const flakySuite = (id: string, extra = '') => `name: ${id}
${extra}suite: { id: ${id}, prompt: hi }
cases:
  - { id: ${id}-a, verify: 'if [ -e variant-y ] && [ "$FLAKY" != ok ]; then exit 127; fi; grep -q hello out.txt' }
  - { id: ${id}-b, verify: grep -q hello out.txt }
  - { id: ${id}-c, verify: 'if [ "$FLAKY" != ok ]; then exit 127; fi; grep -q hello out.txt' }
variants:
  - { harness: command, model: x, profile: { run: echo hello > out.txt } }
  - { harness: command, model: y, profile: { run: echo hello > out.txt; touch variant-y } }
trials: 3
`;
  const setFlaky = async (value: string) =>
    expect((await suite.api.call('environment.set', { variables: [{ name: 'FLAKY', value, secret: false }] })).status).toBe(200);

  it('--retry-void runs the void case × variant pairs again, as many trials as were void, and merges them with the batch', async () => {
    const file = cli.write('flaky.yaml', flakySuite('flaky'));
    await setFlaky('no');
    const first = await cli.run([file, '--fail-on', 'strict']);
    expect(first.code).toBe(1);
    const [originalId] = batchIdsIn(first.stdout);
    expect(first.stdout).toContain(`Void trials (9), by reason:\n  9 × ${CANNOT_RUN} (flaky-a, flaky-c)\n`);

    await setFlaky('ok');
    const json = path.join(dir, 'retry.json');
    const retry = await cli.run([file, '--retry-void', originalId, '--fail-on', 'strict', '--json', json]);
    expect(retry.stderr).toBe('');
    expect(retry.code).toBe(0);
    expect(retry.stdout.split('\n')[0]).toBe(`flaky: running the 9 void trials of batch ${originalId} again, in 2 batches`);
    const ids = batchIdsIn(retry.stdout).filter((id) => id !== originalId);
    expect(ids).toHaveLength(2);
    const batches = await Promise.all(ids.map(getBatch));
    const pairs = batches.map((batch) => batch.runs.map((run: any) => `${run.case.id} on ${run.variant.model} × ${run.trials.length}`));
    expect(pairs).toEqual([['flaky-a on y × 3'], ['flaky-c on x × 3', 'flaky-c on y × 3']]);
    expect(batches.flatMap((batch) => batch.runs.flatMap((run: any) => run.trials.map((trial: any) => trial.status)))).toEqual(Array(9).fill('passed'));
    // The summary is the original batch with its void trials replaced: 9 trials a variant, all passed.
    expect(retry.stdout).toContain(
      `flaky: batch ${ids[0]} finished, batch ${ids[1]} finished, merged with the trials of batch ${originalId} that were not void`,
    );
    expect(retry.stdout).toMatch(/command\/x\s+9\s+9\s+0\s+0\s+100%/);
    expect(retry.stdout).toMatch(/command\/y\s+9\s+9\s+0\s+0\s+100%/);
    expect(retry.stdout).not.toContain('Void trials');
    const written = JSON.parse(fs.readFileSync(json, 'utf8'));
    expect(written).toMatchObject({ name: 'flaky', suite: 'flaky', retryOf: originalId });
    expect(written.batches.map((batch: any) => batch.id)).toEqual(ids);

    // A batch with nothing void: nothing runs again, its own result stands.
    const before = await batchCount();
    const clean = await cli.run([file, '--retry-void', ids[0]]);
    expect(clean.code).toBe(0);
    expect(clean.stdout.split('\n')[0]).toBe(`flaky: batch ${ids[0]} has no void trial of this suite file to run again`);
    expect(clean.stdout).toContain(`flaky: batch ${ids[0]} finished\n`);
    expect(clean.stdout).toMatch(/command\/y\s+3\s+3\s+0\s+0\s+100%/);
    expect(await batchCount()).toBe(before);
  });

  it('--retry-void refuses a batch of another suite, one it cannot find, and more than one file', async () => {
    const other = await cli.run([cli.write('other.yaml', twoCases('other-suite', 'grep -q hello out.txt'))]);
    const [otherId] = batchIdsIn(other.stdout);
    const file = cli.write('mine.yaml', flakySuite('mine'));
    const before = await batchCount();
    const wrongSuite = await cli.run([file, '--retry-void', otherId]);
    expect(wrongSuite.code).toBe(2);
    expect(wrongSuite.stderr).toContain(`--retry-void: batch ${otherId} ran the suite "other-suite", and mine.yaml is the suite "mine"`);
    const missing = await cli.run([file, '--retry-void', 'bat_0000000000000000000000000000']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--retry-void: this organization has no batch bat_0000000000000000000000000000.');
    const two = await cli.run([file, file, '--retry-void', otherId]);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('--retry-void takes one suite file, the one the batch ran, or none');
    const noFile = await cli.run(['--retry-void', otherId, '--local', '--tag', 'x']);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('--retry-void without a suite file runs the stored cases on the server as they are: --local, --tag needs the suite file');
    const noBatch = await cli.run(['--retry-void', 'bat_0000000000000000000000000000']);
    expect(noBatch.code).toBe(2);
    expect(noBatch.stderr).toContain('--retry-void: this organization has no batch bat_0000000000000000000000000000.');
    // An id the API refuses (empty, or over its bound) is the user's to fix, as an unknown one.
    for (const id of ['', 'b'.repeat(201)]) {
      const refused = await cli.run(['--retry-void', id]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^--retry-void: evals\.batches\.get answered 400/);
    }
    expect(await batchCount()).toBe(before);
  });

  it('--retry-void without a suite file runs the void pairs again from the cases as the server stores them', async () => {
    const file = cli.write('stored.yaml', flakySuite('stored'));
    await setFlaky('no');
    const first = await cli.run([file]);
    const [originalId] = batchIdsIn(first.stdout);
    expect(first.stdout).toContain(`Void trials (9), by reason:\n  9 × ${CANNOT_RUN} (stored-a, stored-c)\n`);
    fs.rmSync(file);

    await setFlaky('ok');
    const json = path.join(dir, 'stored-retry.json');
    const retry = await cli.run(['--retry-void', originalId, '--fail-on', 'strict', '--json', json]);
    expect(retry.stderr).toBe('');
    expect(retry.code).toBe(0);
    expect(retry.stdout.split('\n')[0]).toBe(`stored: running the 9 void trials of batch ${originalId} again, in 2 batches`);
    const ids = batchIdsIn(retry.stdout).filter((id) => id !== originalId);
    const batches = await Promise.all(ids.map(getBatch));
    const pairs = batches.map((batch) => batch.runs.map((run: any) => `${run.case.id} on ${run.variant.model} × ${run.trials.length}`).sort());
    expect(pairs).toEqual([['stored-a on y × 3'], ['stored-c on x × 3', 'stored-c on y × 3']]);
    expect(retry.stdout).toMatch(/command\/x\s+9\s+9\s+0\s+0\s+100%/);
    expect(retry.stdout).toMatch(/command\/y\s+9\s+9\s+0\s+0\s+100%/);
    expect(retry.stdout).not.toContain('Void trials');
    expect(JSON.parse(fs.readFileSync(json, 'utf8'))).toMatchObject({ name: 'stored', suite: 'stored', retryOf: originalId });

    // Nothing void in a retried batch: nothing runs again.
    const before = await batchCount();
    const clean = await cli.run(['--retry-void', ids[0]]);
    expect(clean.code).toBe(0);
    expect(clean.stdout.split('\n')[0]).toBe(`stored: batch ${ids[0]} has no void trial to run again`);
    expect(await batchCount()).toBe(before);
  });

  it('--retry-void in local mode runs the void pairs here, with the env the file names', async () => {
    const file = cli.write('local-flaky.yaml', flakySuite('local-flaky', 'env: [FLAKY]\n'));
    const first = await cli.run([file, '--local'], { FLAKY: 'no' });
    expect(first.code).toBe(0);
    const [originalId] = batchIdsIn(first.stdout);
    expect((await getBatch(originalId)).local).toBe(true);
    // Without the file its pairs cannot run again: the server does not run a local variant.
    const before = await batchCount();
    const withoutFile = await cli.run(['--retry-void', originalId, '--fail-on', 'never']);
    expect(withoutFile.code).toBe(0);
    expect(withoutFile.stdout).toContain(
      'not run again: local-flaky-a on command/y (it ran on a machine of its own (local mode): give its suite file to run it again there)',
    );
    expect(await batchCount()).toBe(before);
    const retry = await cli.run([file, '--local', '--retry-void', originalId, '--fail-on', 'strict'], { FLAKY: 'ok' });
    expect(retry.code).toBe(0);
    const ids = batchIdsIn(retry.stdout).filter((id) => id !== originalId);
    expect(ids).toHaveLength(2);
    for (const batch of await Promise.all(ids.map(getBatch))) expect(batch).toMatchObject({ local: true, status: 'finished' });
    expect(retry.stdout).toMatch(/command\/x\s+9\s+9\s+0\s+0\s+100%/);
    expect(retry.stdout).toMatch(/command\/y\s+9\s+9\s+0\s+0\s+100%/);
  });
});
