import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type {
  ModelCallBodies,
  TrajectoryCommand,
  TrajectoryConversation,
  TrajectoryMessage,
  TrajectoryModelCall,
  TrajectoryPrepare,
  TrajectoryToolCall,
  TrialArtifact,
  TrialDiff,
  TrialUsage,
} from '#trial-runner';
import type { ValidationRecord } from '#trial-runner';
import type { CostRecord } from './costs';

/** Every trial event names its trial, run, batch and organization, so projections find their documents. */
export interface TrialRef {
  trialId: string;
  runId: string;
  batchId: string;
  organization: string;
}

/** The measured part of a trial's outcome, shared by scored and voided trials. */
export interface TrialResult {
  finishedAt: string;
  exitCode: number | null;
  timed: boolean;
  modelMs: number;
  sandboxMs: number;
  sandboxId: string | null;
  filesChanged: string[];
  artifacts: TrialArtifact[];
  usage: TrialUsage | null;
  costs: CostRecord;
  harnessVersion: string | null;
  /** The sandbox driver it ran under; absent in events recorded before it was (and null: none was made). */
  sandboxDriver?: 'bubblewrap' | 'process' | null;
}

export type TrialQueued = DomainEvent<'TrialQueued', TrialRef & { ordinal: number; queuedAt: string }>;
/**
 * The trial began. A server instance's start is its claim: `instanceId` owns the trial until
 * `leaseExpiresAt` unless it renews (TrialLeaseRenewed). Both are absent when a local runner
 * leased the trial (its lease is TrialLeased) and in events stored before claims had leases.
 */
export type TrialStarted = DomainEvent<'TrialStarted', TrialRef & { startedAt: string; instanceId?: string; leaseExpiresAt?: string }>;
/**
 * The owner of a server trial's claim is still running it: the claim holds until `leaseExpiresAt`.
 * Machinery only: the saga folds it, no read model shows it.
 */
export type TrialLeaseRenewed = DomainEvent<'TrialLeaseRenewed', TrialRef & { instanceId: string; renewedAt: string; leaseExpiresAt: string }>;
export type TrialCommandRecorded = DomainEvent<'TrialCommandRecorded', TrialRef & { entry: TrajectoryCommand }>;
/** A turn's message, between the commands of the trajectory. */
export type TrialMessageRecorded = DomainEvent<'TrialMessageRecorded', TrialRef & { entry: TrajectoryMessage }>;
/** The conversation's end: how many agent turns ran and why it ended. */
export type TrialConversationEnded = DomainEvent<'TrialConversationEnded', TrialRef & { entry: TrajectoryConversation }>;
/** A call the agent made to its model through the model gateway, metered by the service (an entry of the trajectory). */
export type TrialModelCalled = DomainEvent<'TrialModelCalled', TrialRef & { entry: TrajectoryModelCall; bodies?: ModelCallBodies }>;
/** A tool the agent called, as its own output reported it (an entry of the trajectory). */
export type TrialToolCalled = DomainEvent<'TrialToolCalled', TrialRef & { entry: TrajectoryToolCall }>;
/** The agent's change to its workspace as a diff (large ones live in the blob store; no read model holds it). */
export type TrialDiffRecorded = DomainEvent<'TrialDiffRecorded', TrialRef & { diff: TrialDiff }>;
/** The case's prepare ran before the first agent turn (an entry of the trajectory). */
export type TrialPrepared = DomainEvent<'TrialPrepared', TrialRef & { entry: TrajectoryPrepare }>;
/** One validation record of the trial's validator, in index order, before the verdict. */
export type TrialValidated = DomainEvent<'TrialValidated', TrialRef & { validation: ValidationRecord }>;
export type TrialVerified = DomainEvent<'TrialVerified', TrialRef & { command: string; exitCode: number }>;
/**
 * `failure` says why a trial failed when verify did not decide it (the agent ran out of time:
 * `timed`; a limit it hit); null otherwise, and absent from TrialScored events stored before it existed.
 */
export type TrialScored = DomainEvent<'TrialScored', TrialRef & TrialResult & { status: 'passed' | 'failed'; failure?: string | null }>;
export type TrialVoided = DomainEvent<'TrialVoided', TrialRef & TrialResult & { failure: string; voidFields: string[]; serviceFault: boolean }>;

export type TrialEvent =
  | TrialQueued
  | TrialStarted
  | TrialCommandRecorded
  | TrialMessageRecorded
  | TrialConversationEnded
  | TrialPrepared
  | TrialModelCalled
  | TrialToolCalled
  | TrialDiffRecorded
  | TrialVerified
  | TrialValidated
  | TrialScored
  | TrialVoided;

/** The events whose `entry` is a trajectory entry, in the order the trial recorded them. */
export type TrialTrajectoryEvent = TrialCommandRecorded | TrialMessageRecorded | TrialConversationEnded | TrialPrepared | TrialModelCalled | TrialToolCalled;

export const TRIAL_EVENT_TYPES = [
  'TrialQueued',
  'TrialStarted',
  'TrialCommandRecorded',
  'TrialMessageRecorded',
  'TrialConversationEnded',
  'TrialPrepared',
  'TrialModelCalled',
  'TrialToolCalled',
  'TrialDiffRecorded',
  'TrialVerified',
  'TrialValidated',
  'TrialScored',
  'TrialVoided',
] as const;

export const trialStream = (trialId: string) => `trial-${trialId}`;
