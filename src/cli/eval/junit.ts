import junit from 'junit-report-builder';
import type { BatchView, RunView } from './batch-view';
import { failureTail } from './summary';
import { groupByVariant } from './variant-groups';

/** A batch that ran, with the name of its suite file. */
export interface FinishedSuite {
  name: string;
  batch: BatchView;
}

function seconds(run: RunView & { startedAt?: string; finishedAt?: string | null }): number | null {
  if (!run.startedAt || !run.finishedAt) return null;
  return (Date.parse(run.finishedAt) - Date.parse(run.startedAt)) / 1000;
}

/**
 * JUnit XML for CI test reports: a testsuite per variant of each batch, a testcase per run
 * (a case on that variant), a failure when one of its trials failed, an error when none failed
 * but one was voided (the machinery broke, which is not the agent's failure).
 */
export function writeJunit(file: string, suites: FinishedSuite[]): void {
  const builder = junit.newBuilder();
  for (const { name, batch } of suites) {
    for (const group of groupByVariant(batch.runs)) {
      const testSuite = builder.testSuite().name(`${name} · ${group.label}`).property('batch', batch.id);
      for (const run of group.runs) {
        const testCase = testSuite.testCase().className(`${name}.${group.label}`).name(run.case.id);
        const time = seconds(run);
        if (time !== null) testCase.time(time);
        const failed = run.trials.filter((trial) => trial.status === 'failed');
        const voided = run.trials.filter((trial) => trial.status === 'void');
        if (failed.length > 0) {
          testCase.failure(`${failed.length} of ${run.trials.length} trials failed: ${failureTail(failed[0])[0]}`, 'failed');
          testCase.standardOutput(failed.flatMap((trial) => [`trial ${trial.ordinal}:`, ...failureTail(trial)]).join('\n'));
        } else if (voided.length > 0 || run.status === 'failed') {
          testCase.error(run.failure ?? `${voided.length} of ${run.trials.length} trials void: ${voided[0].failure ?? 'no reason recorded'}`, 'void');
        }
      }
    }
  }
  builder.writeTo(file);
}
