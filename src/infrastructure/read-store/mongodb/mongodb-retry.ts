import { MongoError, MongoNetworkError, MongoServerSelectionError } from 'mongodb';

/**
 * Server error codes that mean "not done, try again shortly": a primary stepping down or
 * shutting down, an election in progress, a host unreachable for a moment, or a query whose
 * cursor a collection swap invalidated (`assay projections rebuild` renames the rebuilt
 * collections onto the live ones; asked again, the query reads the new collection).
 */
const TRANSIENT_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  43, // CursorNotFound
  175, // QueryPlanKilled
  237, // CursorKilled
  89, // NetworkTimeout
  91, // ShutdownInProgress
  134, // ReadConcernMajorityNotAvailableYet
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

export function isTransient(error: unknown): boolean {
  if (!(error instanceof MongoError)) return false;
  if (error.hasErrorLabel('RetryableWriteError') || error.hasErrorLabel('TransientTransactionError')) return true;
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError) return true;
  return typeof error.code === 'number' && TRANSIENT_CODES.has(error.code);
}

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** The wait before the first retry; each further retry waits twice as long, up to maxDelayMs. */
  initialDelayMs: number;
  maxDelayMs: number;
  sleep: (ms: number) => Promise<void>;
}

/**
 * Five tries over about three seconds, beyond the driver's own single retry: enough to ride out
 * a step-down and a short election, bounded so that a store that is really gone fails the call.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attempts: 5,
  initialDelayMs: 200,
  maxDelayMs: 2_000,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/**
 * Runs an operation again on transient errors, with a jittered exponential backoff. A retried
 * write may have been applied before its connection failed: the read models' writes are
 * idempotent (a replace of a computed document, or an update guarded by position), so applying
 * one twice changes nothing.
 */
export async function retrying<T>(policy: RetryPolicy, operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= policy.attempts || !isTransient(error)) throw error;
      const delay = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
      await policy.sleep(delay * (0.5 + Math.random() / 2));
    }
  }
}
