/**
 * How a trial ended. A step that voids the trial throws a TrialVoid; the runner catches it and
 * keeps whatever the trial had recorded so far (trajectory, changed files) in the outcome.
 */
export interface Verdict {
  status: 'passed' | 'failed' | 'void';
  failure: string | null;
  voidFields: string[];
  serviceFault: boolean;
  timed: boolean;
}

export class TrialVoid extends Error {
  constructor(
    readonly failure: string,
    readonly voidFields: string[],
    readonly options: { serviceFault?: boolean } = {},
  ) {
    super(failure);
    this.name = 'TrialVoid';
  }

  get verdict(): Verdict {
    return {
      status: 'void',
      failure: this.failure,
      voidFields: this.voidFields,
      serviceFault: this.options.serviceFault ?? false,
      // A void trial is never the agent running out of time: that is a failure (ranOutOfTime).
      timed: false,
    };
  }
}

/**
 * The agent's own doing ended its turn at a limit (it filled its workspace, forked without
 * bound): the trial is failed, with the reason, not voided.
 */
export class TrialFailed extends Error {
  constructor(readonly failure: string) {
    super(failure);
    this.name = 'TrialFailed';
  }

  get verdict(): Verdict {
    return { status: 'failed', failure: this.failure, voidFields: [], serviceFault: false, timed: false };
  }
}

export const scored = (passed: boolean): Verdict => ({
  status: passed ? 'passed' : 'failed',
  failure: null,
  voidFields: [],
  serviceFault: false,
  timed: false,
});

/**
 * The agent was still running at the case's timeoutMs: a slow agent has failed the task, so the
 * trial is scored failed (timed), not voided. Verify does not run: the agent did not finish.
 */
export const ranOutOfTime = (timeoutMs: number): Verdict => ({
  status: 'failed',
  failure: `the agent ran out of time: it was still running after ${timeoutMs} ms`,
  voidFields: [],
  serviceFault: false,
  timed: true,
});

/** The service was asked to stop (shutdown) while the trial ran: not the case's doing. */
export const interrupted = () => new TrialVoid('the trial was interrupted: the service is stopping', ['service'], { serviceFault: true });

/** A fault of ours (a bug, a full disk): the trial says so in one line, the log keeps the detail. */
export function internalFault(error: unknown): TrialVoid {
  const code = (error as NodeJS.ErrnoException | null | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return new TrialVoid(`internal error while running the trial: ${code ?? message}`, ['service'], { serviceFault: true });
}
