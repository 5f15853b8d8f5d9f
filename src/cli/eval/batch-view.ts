/**
 * The parts of `evals.batches.get`'s answer the CLI reads (docs/api.md, "Run"). The CLI is a
 * client of the HTTP API: it restates only what it uses, and keeps the rest as it came.
 */
export interface CostRecordView {
  knownActualUsd: number;
  allocatedUsd: number;
  estimatedEquivalentUsd: number;
  incomplete: boolean;
}

export interface TrialView {
  id: string;
  ordinal: number;
  status: 'queued' | 'running' | 'passed' | 'failed' | 'void';
  failure: string | null;
  timed?: boolean;
  exitCode?: number | null;
  /** Commands the agent ran (the distribution's command statistics count them). */
  commands?: number;
  verifySteps?: Array<{ command: string; exitCode: number | null }>;
  trajectory?: Array<{ _tag: string; command?: string; exitCode?: number | null; output?: string }>;
}

export interface RunView {
  id: string;
  case: { id: string; name: string };
  suite?: { id: string; name: string };
  variant: { id: string; harness: string; model: string; profile: { name?: string } | null; sandbox: string | null; userModel: string | null };
  status: 'running' | 'finished' | 'failed';
  failure: string | null;
  distribution: { trials: number; passed: number; failed: number; voided: number; scored: number; commandMedian: number | null };
  costs: CostRecordView;
  trials: TrialView[];
  definitionHash?: string;
  /** Whether the run was made on the user's machine (local mode). */
  local?: boolean;
  /** Set by the CLI on a run whose void trials `--retry-void` ran again: the run that did. */
  retriedIn?: string;
}

export interface BatchView {
  id: string;
  status: 'running' | 'finished' | 'failed';
  failure: string | null;
  local: boolean;
  runs: RunView[];
}

export const isSettled = (trial: TrialView) => trial.status === 'passed' || trial.status === 'failed' || trial.status === 'void';
