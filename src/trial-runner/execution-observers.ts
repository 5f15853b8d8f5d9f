/**
 * What the trial runner and the model client report as they work, for whoever listens (the
 * server's metrics). A hook rather than a metrics library: this folder stays importable alone.
 * A listener's failure never reaches the trial.
 */
export interface ProviderCallReport {
  provider: string;
  model: string;
  /** `ok`, or the failure's kind (timeout, rate-limit, …). */
  outcome: string;
  durationMs: number;
  inputTokens: number;
  outputTokens: number;
}

export interface SandboxStartReport {
  driver: 'bubblewrap';
  /** From the launch to the sandbox's report that the command runs inside it. */
  durationMs: number;
}

export interface ExecutionObserver {
  providerCall?(report: ProviderCallReport): void;
  sandboxStarted?(report: SandboxStartReport): void;
}

const observers = new Set<ExecutionObserver>();

/** Listens until the returned function is called. */
export function observeExecution(observer: ExecutionObserver): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

export function reportProviderCall(report: ProviderCallReport): void {
  for (const observer of observers) quietly(() => observer.providerCall?.(report));
}

export function reportSandboxStart(report: SandboxStartReport): void {
  for (const observer of observers) quietly(() => observer.sandboxStarted?.(report));
}

function quietly(report: () => void): void {
  try {
    report();
  } catch {
    // A listener's fault is not the trial's.
  }
}
