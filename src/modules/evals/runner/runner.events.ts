import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { TrialRef } from '../trials/trial.events';

/**
 * On the trial's stream, with TrialStarted: a local runner holds the trial until `expiresAt`,
 * or longer while it beats (see leaseExpiry). Only the report naming `leaseId` is recorded.
 */
export type TrialLeased = DomainEvent<'TrialLeased', TrialRef & { leaseId: string; leasedAt: string; expiresAt: string }>;

/** The runner of a local batch said it is alive: its leases run on from `at`. */
export type RunnerBeat = DomainEvent<'RunnerBeat', { batchId: string; organization: string; at: string }>;

/** The runner is done with the batch: its unreported trials were voided (cancelled: it was stopped). */
export type RunnerFinished = DomainEvent<'RunnerFinished', { batchId: string; organization: string; at: string; cancelled: boolean }>;

/** The runner was silent too long: the batch gave back its slot, its unreported trials are void, and it fails. */
export type RunnerSilenced = DomainEvent<'RunnerSilenced', { batchId: string; organization: string; at: string; failure: string }>;

export type RunnerEvent = RunnerBeat | RunnerFinished | RunnerSilenced;

export const RUNNER_EVENT_TYPES: ReadonlyArray<RunnerEvent['type'] | TrialLeased['type']> = ['TrialLeased', 'RunnerBeat', 'RunnerFinished', 'RunnerSilenced'];

/**
 * A local batch's runner events live beside the batch's own stream, not in it: the saga ends a
 * batch by appending to `batch-{id}` at the revision of its start, which beats must not move.
 */
export const runnerStream = (batchId: string) => `runner-${batchId}`;

export const SILENCED_FAILURE = 'runner stopped checking in';
export const LEASE_EXPIRED_FAILURE = "the runner's lease on this trial expired";
export const CANCELLED_FAILURE = 'cancelled by the runner';
/** The failure of a batch its runner finished as cancelled (Ctrl-C in local mode). */
export const BATCH_CANCELLED_FAILURE = 'cancelled';
export const UNREPORTED_FAILURE = 'the runner finished without reporting this trial';
