import type { TrialOutcome } from './trial-runner.port';

/** The outcome of a trial voided before anything ran in a sandbox: nothing measured, nothing changed. */
export function voidOutcome(fields: { failure: string; voidFields: string[]; serviceFault: boolean; harnessVersion?: string | null }): TrialOutcome {
  return {
    status: 'void',
    exitCode: null,
    failure: fields.failure,
    voidFields: fields.voidFields,
    serviceFault: fields.serviceFault,
    timed: false,
    trajectory: [],
    verifySteps: [],
    filesChanged: [],
    artifacts: [],
    modelMs: 0,
    sandboxMs: 0,
    sandboxId: null,
    usage: null,
    harnessVersion: fields.harnessVersion ?? null,
  };
}
