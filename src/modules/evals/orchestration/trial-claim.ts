import { EventMetadata, EventStore, LIVENESS_METADATA_KEY, WrongExpectedVersion } from '#infrastructure/event-store/event-store.port';
import type { DomainEvent } from '#infrastructure/event-store/stream-command';
import type { JsonLogger } from '#infrastructure/logging/json-logger';
import type { Clock } from '#shared/clock';
import { newEventId } from '#shared/ids';
import { trialStream, TrialRef } from '../trials/trial.events';
import { ClaimTerms, claimEvent, renewalEvent, renewalIntervalMs } from './trial-lease';

/** The revision of TrialQueued: a trial is claimed only while nothing followed it. */
const QUEUED_REVISION = 0;

/**
 * This instance's hold on one trial, from its claim to its outcome. Every append goes at the
 * revision this owner appended last, so nothing of another instance can be in between: a second
 * claim, a renewal of a claim taken over, or an outcome after the trial was voided as abandoned
 * fails WrongExpectedVersion. Ids are new on every attempt (never derived from the trial), so a
 * second instance's claim is a conflict, not an idempotent retry of the first.
 */
export class TrialClaim {
  private readonly stream: string;
  private readonly lost = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> = Promise.resolve();
  private ended = false;

  private constructor(
    private readonly eventStore: EventStore,
    private readonly ref: TrialRef,
    private readonly terms: ClaimTerms,
    private readonly clock: Clock,
    private readonly metadata: EventMetadata,
    private readonly logger: JsonLogger,
    /** The stream's revision after this owner's last append. */
    private revision: number,
  ) {
    this.stream = trialStream(ref.trialId);
  }

  /** Claims a queued trial; null when another instance claimed it (or it ended) first. */
  static async take(
    eventStore: EventStore,
    ref: TrialRef,
    terms: ClaimTerms,
    context: { clock: Clock; metadata: EventMetadata; logger: JsonLogger },
  ): Promise<TrialClaim | null> {
    const event = claimEvent(ref, terms, context.clock.now());
    try {
      const appended = await eventStore.append(trialStream(ref.trialId), [{ id: newEventId(), ...event, metadata: context.metadata }], QUEUED_REVISION);
      const claim = new TrialClaim(eventStore, ref, terms, context.clock, context.metadata, context.logger, appended.nextExpectedRevision);
      claim.startRenewing();
      return claim;
    } catch (error) {
      if (error instanceof WrongExpectedVersion) return null;
      throw error;
    }
  }

  /** Aborted when another instance took the trial over (this owner's lease had lapsed). */
  get signal(): AbortSignal {
    return this.lost.signal;
  }

  /**
   * Appends the trial's outcome as the claim's last events; false when the claim was lost (the
   * trial was voided meanwhile), and then nothing is appended. `issued` is called as soon as an
   * append made after it is sure to be stored after the outcome: on a store that stores appends in
   * call order, once the outcome's append is made (the embedded store then commits both in one
   * group, the outcome first); on any other, once the outcome is stored. Also when nothing is
   * appended.
   */
  async finish(events: DomainEvent[], issued: () => void = () => undefined): Promise<boolean> {
    this.stopRenewing();
    await this.renewing;
    let told = false;
    const tell = () => {
      if (!told) issued();
      told = true;
    };
    try {
      if (this.lost.signal.aborted) return false;
      const toAppend = events.map((event) => ({ id: newEventId(), type: event.type, data: event.data, metadata: this.metadata }));
      const appending = this.eventStore.append(this.stream, toAppend, this.revision);
      if (this.eventStore.appendsInCallOrder === true) tell();
      await appending;
      return true;
    } catch (error) {
      if (!(error instanceof WrongExpectedVersion)) throw error;
      this.lose();
      return false;
    } finally {
      tell();
    }
  }

  /** Stops renewing without an outcome (the trial could not be finished here). */
  release(): void {
    this.stopRenewing();
  }

  private startRenewing(): void {
    this.timer = setInterval(() => this.renew(), renewalIntervalMs(this.terms.leaseMs));
    this.timer.unref();
  }

  private stopRenewing(): void {
    this.ended = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One renewal at a time, in order, so each expects the revision the previous one made. */
  private renew(): void {
    this.renewing = this.renewing.then(async () => {
      if (this.ended) return;
      const event = renewalEvent(this.ref, this.terms, this.clock.now());
      try {
        // A heartbeat, not an audit fact: kept out of the organization's hash chain, so it never waits on it.
        const metadata = { ...this.metadata, [LIVENESS_METADATA_KEY]: true };
        const appended = await this.eventStore.append(this.stream, [{ id: newEventId(), ...event, metadata }], this.revision);
        this.revision = appended.nextExpectedRevision;
      } catch (error) {
        if (error instanceof WrongExpectedVersion) {
          this.lose();
          return;
        }
        // A busy store: the lease has two more renewals before it lapses.
        this.logger.warn('could not renew a trial claim', { trialId: this.ref.trialId, error: (error as Error).message });
      }
    });
  }

  private lose(): void {
    if (this.lost.signal.aborted) return;
    this.stopRenewing();
    this.logger.warn('another instance took over a trial whose claim lapsed: stopping it here', { trialId: this.ref.trialId });
    this.lost.abort();
  }
}
