import { bareSpawn } from '../../src/modules/evals/execution/sandbox/bare-spawn';
import { BUBBLEWRAP, PROCESS, TempDirs, testRunner, trialSpec } from '../support/trial-fixtures';

const dirs = new TempDirs();
afterAll(() => dirs.removeAll());

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

describe('TrialRunner: orchestration overhead', () => {
  it.each([
    ['bubblewrap', BUBBLEWRAP],
    ['process', PROCESS],
  ] as const)('stays within 25 ms of a bare spawn at p50 (%s)', async (driver, sandbox) => {
    const { runner } = testRunner(dirs);
    const workspace = dirs.make('assay-bare-');
    const trials: number[] = [];
    const bare: number[] = [];
    for (let round = 0; round < 25; round += 1) {
      const started = performance.now();
      const outcome = await runner.run(trialSpec({ sandbox, profile: { run: 'true' }, verify: null }));
      trials.push(performance.now() - started);
      expect(outcome.trajectory).toHaveLength(1);
      bare.push((await bareSpawn(driver, workspace, 'true')).durationMs);
    }
    const overhead = median(trials) - median(bare);
    console.log(`${driver}: trial p50 ${median(trials).toFixed(1)} ms, bare p50 ${median(bare).toFixed(1)} ms, overhead ${overhead.toFixed(1)} ms`);
    expect(overhead).toBeLessThanOrEqual(25);
  });
});
