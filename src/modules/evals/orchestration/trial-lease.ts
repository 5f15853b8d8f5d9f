import type { TrialLeaseRenewed, TrialRef, TrialStarted } from '../trials/trial.events';
import type { SagaTrial } from './saga-state';

/**
 * Pure decisions of trial claims between server instances sharing one log. A claim is the
 * trial's TrialStarted naming its owner and when the claim lapses; the owner renews it every
 * third of the lease. Exclusivity does not come from here but from the expected revision of
 * each append (see TrialClaim); these only say what to append and when a claim is dead.
 */

/** Who claims, for how long. */
export interface ClaimTerms {
  instanceId: string;
  leaseMs: number;
}

/** The claim: the trial starts, owned by `instanceId` until `now + leaseMs`. */
export function claimEvent(ref: TrialRef, terms: ClaimTerms, now: Date): TrialStarted {
  const leaseExpiresAt = new Date(now.getTime() + terms.leaseMs).toISOString();
  return { type: 'TrialStarted', data: { ...ref, startedAt: now.toISOString(), instanceId: terms.instanceId, leaseExpiresAt } };
}

/** The owner is still at it: the claim holds until `now + leaseMs`. */
export function renewalEvent(ref: TrialRef, terms: ClaimTerms, now: Date): TrialLeaseRenewed {
  const leaseExpiresAt = new Date(now.getTime() + terms.leaseMs).toISOString();
  return { type: 'TrialLeaseRenewed', data: { ...ref, instanceId: terms.instanceId, renewedAt: now.toISOString(), leaseExpiresAt } };
}

/** How often the owner renews: three renewals per lease, so two may fail before it lapses. */
export function renewalIntervalMs(leaseMs: number): number {
  return Math.max(1, Math.floor(leaseMs / 3));
}

/**
 * Whether a running trial that this process is not running has lost its runner: its claim is
 * this instance's own (an earlier life of the same ASSAY_INSTANCE_ID, since this one is not
 * running it), or its lease has passed. A claim stored before leases lapses a lease after it
 * started. A trial no claim names an owner of that is still within its lease is left alone.
 */
export function claimLapsed(trial: SagaTrial, now: Date, terms: ClaimTerms): boolean {
  if (trial.status !== 'running') return false;
  if (trial.owner === terms.instanceId) return true;
  const expiresAtMs = trial.leaseExpiresAtMs ?? (trial.startedAtMs ?? 0) + terms.leaseMs;
  return now.getTime() >= expiresAtMs;
}
