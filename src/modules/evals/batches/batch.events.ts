import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { EvalCase, EvalSource, EvalSuite, VariantDefinition } from '#shared/eval-definitions';

export interface Trigger {
  source: string;
  url: string | null;
}

/** What a run used: recorded so a result can be read against the exact definition. */
export interface RunSetup {
  prepare: string | null;
  prompt: string;
  source: EvalSource;
  validator: string | null;
  verify: string | null;
  validatorFiles: Array<{ path: string; content: string }>;
  /** The recorded batch whose model calls answered this run's (the variant's profile.replay); absent: none. */
  replayOf?: { batchId: string; mode: 'fallback' | 'strict' };
  /**
   * The prompt versions the suite prompt named, as `ID@N` (a `{{prompt:ID@CHANNEL}}` as the version
   * the channel pointed at when the batch started, and the channel it was named by); absent: none.
   */
  prompts?: Array<{ prompt: string; channel: string | null }>;
}

export interface PlannedRun {
  runId: string;
  caseId: string;
  caseName: string;
  variantId: string;
  variant: VariantDefinition;
  userModel: string | null;
  definitionHash: string;
  profileVersion: string | null;
  trialIds: string[];
  setup: RunSetup;
  timeoutMs: number;
  tags: string[];
}

/** Stored in `batch-{id}`: the full request as started, so the saga can run it from the log alone. */
export type BatchStarted = DomainEvent<
  'BatchStarted',
  {
    batchId: string;
    organization: string;
    startedAt: string;
    trigger: Trigger;
    checksIn: boolean;
    trials: number;
    suite: EvalSuite;
    cases: EvalCase[];
    runs: PlannedRun[];
    author: string;
    idempotencyKey: string | null;
    /** Started by a local runner (runner.batches.start); absent in batches started before it existed. */
    local?: boolean;
    /** The prompt versions the suite prompt named (`{{prompt:ID@VERSION}}`, or `@CHANNEL` with the channel), resolved at start; absent when none. */
    prompts?: Array<{ promptId: string; version: number; channel?: string }>;
  }
>;

export type BatchFinished = DomainEvent<'BatchFinished', { batchId: string; organization: string; finishedAt: string }>;
export type BatchFailed = DomainEvent<'BatchFailed', { batchId: string; organization: string; finishedAt: string; failure: string }>;
export type BatchEvent = BatchStarted | BatchFinished | BatchFailed;

/**
 * The first and only event of `batch-{id}` whose start took a slot and never recorded its
 * BatchStarted within the hold: it closes the stream to the start (whose BatchStarted, appended
 * to `no_stream`, then fails), so its slot can be given back without racing it.
 */
export type BatchStartAbandoned = DomainEvent<'BatchStartAbandoned', { batchId: string; organization: string; abandonedAt: string; reason: string }>;

export const batchStream = (batchId: string) => `batch-${batchId}`;
