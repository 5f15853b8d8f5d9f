import { STRICT_REPOSITORY_POLICY, RepositoryPolicy } from '#trial-runner';
import { DEFAULT_USER_MODEL } from '#trial-runner';

/**
 * What a start must know of this server's trial execution: which source URLs it may clone and
 * which sandbox driver a variant's trials would run under. Built where trials are run
 * (execution-host.ts) and given to the start use cases, which refuse what would be refused later.
 */
export interface ExecutionPolicy {
  repositories: RepositoryPolicy;
  allowUnsandboxed: boolean;
  /** The driver for a variant's sandbox kind (null: the server's default); null when the kind has none. */
  driverFor(sandboxKind: string | null): 'bubblewrap' | 'process' | null;
  /** Called once per started batch that will run trials as plain processes. */
  warnUnsandboxed(batchId: string, variants: number[]): void;
  /** The model of a simulated user that names none (ASSAY_CONFIG users.defaultModel): the variant's `userModel`. */
  defaultUserModel: string;
  /**
   * How long a start may hold its batch slot before recording its batch (the trial lease,
   * ASSAY_TRIAL_LEASE_MS): a slot still unstarted after it belongs to a start that died.
   */
  startHoldMs: number;
  /** The model providers configured (ASSAY_CONFIG providers), which a profile's `provider` may name. */
  providers: string[];
}

export const EXECUTION_POLICY = Symbol('ExecutionPolicy');

/** Without a server that runs trials (a bare module in a test): refuse what no server would allow. */
export const STRICT_EXECUTION_POLICY: ExecutionPolicy = {
  repositories: STRICT_REPOSITORY_POLICY,
  allowUnsandboxed: false,
  driverFor: () => 'bubblewrap',
  warnUnsandboxed: () => undefined,
  defaultUserModel: DEFAULT_USER_MODEL,
  startHoldMs: 30_000,
  providers: [],
};
