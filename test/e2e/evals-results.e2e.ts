import * as fs from 'node:fs';
import * as path from 'node:path';
import { startBody, waitForBatch } from '../support/evals';
import { INIT_KEY, InProcessServer, startInProcess } from '../support/servers';
import { TempDirs } from '../support/trial-fixtures';

/** sandbox_kind_1 runs trials as plain processes: they can share a directory of the test's. */
const CONFIG = 'allowUnsandboxed: true\nsandboxes:\n  sandbox_kind_1: { driver: process }\n';
const RAN_OUT = 'the agent ran out of time: it was still running after 1000 ms';

/** What a run reports: timeouts scored as failures, rates of nothing scored, long outputs, costs. */
describe('evals: the results a run reports', () => {
  const dirs = new TempDirs();
  let server: InProcessServer;

  beforeAll(async () => {
    const configDir = dirs.make('assay-config-');
    fs.writeFileSync(path.join(configDir, 'assay.yaml'), CONFIG);
    server = await startInProcess({
      ASSAY_INIT_ORG: 'acme',
      ASSAY_INIT_API_KEY: INIT_KEY,
      ASSAY_DATA_DIR: dirs.make('assay-data-'),
      ASSAY_CONFIG: path.join(configDir, 'assay.yaml'),
    });
  });

  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- server is unassigned when beforeAll failed; afterAll must still clean up
    await server?.close();
    dirs.removeAll();
  });

  async function run(body: Record<string, unknown>) {
    const started = await server.client.call('evals.batches.start', body);
    expect(started.status).toBe(200);
    return waitForBatch(server.client, started.body.id);
  }

  it('scores a trial that runs past timeoutMs as failed (timed), so a run of timeouts and passes is no longer "always passes"', async () => {
    // Every other trial claims an odd number and is too slow; the others finish at once.
    const claims = dirs.make('assay-claims-');
    const agent = `n=0; while ! mkdir "${claims}/$n" 2>/dev/null; do n=$((n+1)); done; if [ $((n % 2)) -eq 1 ]; then sleep 5; fi; echo hello > out.txt`;
    const batch = await run(
      startBody({
        cases: [{ id: 'half-slow', variables: { word: 'hello' }, timeoutMs: 1000, verify: 'grep -q hello out.txt' }],
        variants: [{ harness: 'command', model: 'm', sandbox: 'sandbox_kind_1', profile: { run: agent } }],
        trials: 4,
      }),
    );
    const [result] = batch.runs;
    expect(result.status).toBe('finished');
    const slow = result.trials.filter((trial: any) => trial.timed);
    const quick = result.trials.filter((trial: any) => !trial.timed);
    expect(slow).toHaveLength(2);
    for (const trial of slow) {
      expect(trial).toMatchObject({ status: 'failed', failure: RAN_OUT, voidFields: [], exitCode: null, verifySteps: [] });
      expect(trial.trajectory.map((entry: any) => entry.command)).toContain(agent);
    }
    expect(quick.map((trial: any) => trial.status)).toEqual(['passed', 'passed']);
    expect(quick.every((trial: any) => trial.failure === null)).toBe(true);
    expect(result.distribution).toMatchObject({ trials: 4, scored: 4, passed: 2, failed: 2, voided: 0, passRate: 0.5, deterministic: false });
    const summary = (await server.client.call('evals.batches.list', {})).body.batches.find((entry: any) => entry.id === batch.id);
    expect(summary).toMatchObject({ scored: 4, passed: 2, voided: 0 });
  });

  it('reports no pass rate and no command statistics for a run whose trials were all voided', async () => {
    const batch = await run(
      startBody({
        suite: { id: 'unjudged-suite', prompt: 'Write {{word}} into out.txt' },
        cases: [{ id: 'unjudged', variables: { word: 'hello' } }],
        trials: 2,
      }),
    );
    const [result] = batch.runs;
    expect(result.trials.map((trial: any) => trial.status)).toEqual(['void', 'void']);
    const nothingScored = { trials: 2, scored: 0, voided: 2, passRate: null, commandMin: null, commandMedian: null, commandMax: null, deterministic: false };
    expect(result.distribution).toMatchObject(nothingScored);
    expect((await server.client.call('evals.runs.get', { id: result.id })).body.distribution).toMatchObject(nothingScored);
    const evalCase = await server.client.call('evals.cases.get', { id: 'unjudged' });
    expect(evalCase.body.variants[0].distribution).toMatchObject(nothingScored);
    const listed = await server.client.call('evals.cases.list', {});
    expect(listed.status).toBe(200);
    const suite = await server.client.call('evals.suites.get', { id: 'unjudged-suite' });
    expect(suite.body.tally).toEqual({ passed: 0, scored: 0 });
  });

  it("keeps the start and the end of a long output, with how much was cut between them, in the run's trajectory", async () => {
    const batch = await run(
      startBody({
        variants: [{ harness: 'command', model: 'm', profile: { run: 'seq 1 200000' } }],
        cases: [{ id: 'long-output', variables: { word: 'x' }, verify: 'true' }],
      }),
    );
    const fetched = await server.client.call('evals.runs.get', { id: batch.runs[0].id });
    const step = fetched.body.trials[0].trajectory.find((entry: any) => entry.command === 'seq 1 200000');
    const written = Array.from({ length: 200000 }, (_, i) => `${i + 1}\n`).join('');
    const marker = `\n[… ${Buffer.byteLength(written) - 65536} bytes cut …]\n`;
    expect(step.outputTruncated).toBe(true);
    expect(step.output).toBe(written.slice(0, 32768) + marker + written.slice(-32768));
    expect(step.output.endsWith('199999\n200000\n')).toBe(true);
  });

  it("counts a batch's runs as runs, and all of their trials as trials, in its cost detail", async () => {
    const batch = await run(
      startBody({
        cases: [
          { id: 'cost-a', variables: { word: 'hello' }, verify: 'true' },
          { id: 'cost-b', variables: { word: 'hello' }, verify: 'true' },
        ],
        trials: 3,
      }),
    );
    const fetched = await server.client.call('evals.batches.get', { id: batch.id });
    expect(fetched.status).toBe(200);
    const { costs, runs } = fetched.body;
    expect(costs.components.length).toBeGreaterThan(0);
    for (const component of costs.components) expect(component.detail).toEqual({ runs: 2, trials: 6 });
    for (const component of runs.flatMap((entry: any) => entry.costs.components)) expect(component.detail).toEqual({ trials: 3 });
  });
});
