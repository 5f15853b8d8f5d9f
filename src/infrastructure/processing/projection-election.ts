/**
 * Several instances sharing one MongoDB read store: one of them, the owner, projects the log;
 * the others follow. The owner holds the projection lease (projection-lease.ts) and renews it
 * every third of ASSAY_PROJECTION_LEASE_MS; a follower tries to take it at the same pace and
 * succeeds once it has expired (or was released), then resumes from the per-projection
 * checkpoints. An owner whose renewals fail stops projecting before its lease can expire
 * anywhere (projection-fence.ts). A follower serves reads from the shared store and learns how
 * far the documents are from the owner's checkpoints, which it polls, so read-your-writes holds
 * on it too. The embedded in-memory store has no election: each instance projects for itself.
 */
import type { JsonLogger } from '../logging/json-logger';
import type { ReadStore } from '../read-store/read-store.port';
import { FencedReadStore, writableByTerm } from './fenced-read-store';
import { ProjectionFence } from './projection-fence';
import { LeaseGrant, PROJECTION_RUNNER, ProjectionLease } from './projection-lease';
import { CHECKPOINTS, ProjectionRunner } from './projection-runner';
import type { Projection } from './projection';
import type { EventStore } from '../event-store/event-store.port';

/** How often a follower reads the owner's checkpoints. */
const FOLLOW_EVERY_MS = 100;
/**
 * The owner stops projecting this share of a lease after sending its last renewal that went
 * through: before the lease can expire on any instance whose clock is up to a sixth of a lease
 * ahead (two renewals may fail before that).
 */
export const HOLD_SHARE = 5 / 6;

export interface ElectionSettings {
  /** ASSAY_INSTANCE_ID: the lease's owner while this instance projects. */
  instanceId: string;
  /** ASSAY_PROJECTION_LEASE_MS */
  leaseMs: number;
  followEveryMs?: number;
  /** Wall clock (epoch ms), compared across instances; monotonic clock, for this process's own deadline. */
  clock?: () => number;
  monotonic?: () => number;
}

export class ProjectionElection {
  private readonly lease: ProjectionLease;
  private readonly monotonic: () => number;
  private term: number | null = null;
  private starting: Promise<Error | null> = Promise.resolve(null);
  private pausing: Promise<void> = Promise.resolve();
  private tickTimer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private followTimer: NodeJS.Timeout | null = null;
  /** Raised by each start and stop of following, so that a poll of an earlier round does not go on. */
  private followRound = 0;
  private followFailing = false;
  private stopped = false;

  constructor(
    private readonly runner: ProjectionRunner,
    /** The shared store itself (not fenced): the lease and the checkpoints are read and written here. */
    private readonly store: ReadStore,
    private readonly fence: ProjectionFence,
    private readonly settings: ElectionSettings,
    private readonly logger: JsonLogger,
  ) {
    this.lease = new ProjectionLease(store, PROJECTION_RUNNER, settings.instanceId, settings.leaseMs, settings.clock);
    this.monotonic = settings.monotonic ?? (() => performance.now());
    fence.onLost((reason) => void this.loseOwnership(reason));
  }

  /** A runner that projects through the fence, and the election that drives it. */
  static create(eventStore: EventStore, store: ReadStore, projections: readonly Projection[], settings: ElectionSettings, logger: JsonLogger) {
    const fence = new ProjectionFence(settings.monotonic);
    const runner = new ProjectionRunner(eventStore, new FencedReadStore(store, fence), projections, logger);
    return { runner, election: new ProjectionElection(runner, store, fence, settings, logger) };
  }

  get role(): 'owner' | 'follower' {
    return this.term === null ? 'follower' : 'owner';
  }

  /**
   * Owner: resolves once the read models have caught up with the log, as a lone runner's start
   * does. Follower: once it has read where the owner's checkpoints stand.
   */
  async start(): Promise<void> {
    const sentAt = this.monotonic();
    const grant = await this.lease.acquire();
    this.schedule();
    if (grant) {
      this.becomeOwner(grant, sentAt);
      const failure = await this.starting;
      if (failure) throw failure;
      return;
    }
    await this.follow();
    this.startFollowing();
    const owner = await this.lease.current().then(
      (lease) => lease?.owner ?? null,
      () => null,
    );
    this.logger.info('projection role: follower', { role: 'follower', instanceId: this.settings.instanceId, owner });
  }

  /** Stops renewing and projecting; an owner writes its checkpoint and releases the lease so that another instance takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.stopFollowing();
    await this.ticking;
    await this.pausing;
    const term = this.term;
    // Paused first, so that a start still on its way to subscribing does not subscribe after all.
    if (term !== null) await this.settle(this.runner.pause(true), 'projection checkpoint at shutdown failed');
    await this.runner.stop();
    if (term === null) return;
    this.term = null;
    this.fence.release();
    await this.lease.release(term).catch((error: unknown) => this.logger.warn('projection lease release failed', { error: message(error) }));
  }

  private schedule(): void {
    if (this.stopped) return;
    this.tickTimer = setTimeout(() => {
      this.ticking = this.tick().finally(() => this.schedule());
    }, this.settings.leaseMs / 3);
  }

  private async tick(): Promise<void> {
    try {
      await this.pausing;
      if (this.stopped) return;
      if (this.term !== null) await this.renew(this.term);
      else {
        const sentAt = this.monotonic();
        const grant = await this.lease.acquire();
        if (grant) this.becomeOwner(grant, sentAt);
      }
    } catch (error) {
      // A store that does not answer: the owner's fence ends its hold in time; a follower tries again.
      this.logger.warn('projection lease: the store call failed', { role: this.role, error: message(error) });
    }
  }

  private async renew(term: number): Promise<void> {
    const sentAt = this.monotonic();
    const renewal = await this.lease.renew(term);
    if (this.term !== term) return;
    if (renewal.outcome === 'renewed') this.fence.extend(sentAt + this.settings.leaseMs * HOLD_SHARE);
    else if (renewal.outcome === 'handover') await this.handOver(term, renewal.to);
    else await this.loseOwnership(`the lease is held by ${renewal.owner ?? 'nobody'} now`);
  }

  private becomeOwner(grant: LeaseGrant, sentAt: number): void {
    const term = grant.term;
    if (this.stopped) {
      // Taken while stopping: let it go again rather than keep the others waiting a lease.
      void this.lease.release(term).catch(() => undefined);
      return;
    }
    this.term = term;
    this.fence.hold(term, sentAt + this.settings.leaseMs * HOLD_SHARE);
    this.stopFollowing();
    this.logger.info('projection role: owner', { role: 'owner', instanceId: this.settings.instanceId, term });
    this.starting = this.project(term);
  }

  /** Fences older owners off the checkpoints, then projects from them; the failure, if any. */
  private async project(term: number): Promise<Error | null> {
    try {
      this.fence.check();
      const ids = this.runner.checkpointIds();
      await this.store.collection(CHECKPOINTS).updateMany({ $and: [{ _id: { $in: ids } }, writableByTerm(term - 1)] }, { $set: { term } });
      await this.runner.start();
      return null;
    } catch (error) {
      // Lost while starting: loseOwnership pauses the runner and follows.
      if (this.term !== term) return null;
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  private async handOver(term: number, to: string): Promise<void> {
    this.logger.info('projection lease: handing over', { role: 'follower', to, term });
    this.term = null;
    this.pausing = this.settle(
      (async () => {
        // The checkpoint is written while the lease is still held: the new owner resumes from it.
        await this.settle(this.runner.pause(true), 'projection checkpoint at handover failed');
        this.fence.release();
        if (!(await this.lease.handOver(term, to))) this.logger.warn('projection lease: handover found the lease changed', { to, term });
      })().finally(() => this.startFollowing()),
      'projection lease: handover failed; the lease expires by itself',
    );
    await this.pausing;
  }

  private async loseOwnership(reason: string): Promise<void> {
    const term = this.term;
    if (term === null) return;
    this.term = null;
    this.fence.lose(reason);
    this.logger.warn('projection role: follower (the lease was lost)', { role: 'follower', instanceId: this.settings.instanceId, term, reason });
    this.pausing = this.settle(this.runner.pause(false), 'projection runner did not pause cleanly').then(() => this.startFollowing());
    await this.pausing;
  }

  /** Waits for `work`, logging rather than throwing its failure: a transition must never leave a rejected promise behind. */
  private async settle(work: Promise<void>, failure: string): Promise<void> {
    try {
      await work;
    } catch (error) {
      this.logger.warn(failure, { error: message(error) });
    }
  }

  private startFollowing(): void {
    if (this.stopped || this.term !== null) return;
    this.stopFollowing();
    const round = this.followRound;
    const every = this.settings.followEveryMs ?? FOLLOW_EVERY_MS;
    const poll = () => {
      this.followTimer = setTimeout(() => {
        void this.follow().finally(() => {
          if (round === this.followRound) poll();
        });
      }, every);
    };
    poll();
  }

  private stopFollowing(): void {
    this.followRound += 1;
    if (this.followTimer) clearTimeout(this.followTimer);
    this.followTimer = null;
  }

  /** Reads the owner's checkpoints and moves this instance's position to them. */
  private async follow(): Promise<void> {
    let positions = new Map<string, number>();
    try {
      const stored = await this.store.collection(CHECKPOINTS).find({ _id: { $in: this.runner.checkpointIds() } });
      positions = new Map(stored.map((checkpoint) => [checkpoint._id, checkpoint.position as number]));
      if (this.followFailing) this.logger.info('projection checkpoints readable again', {});
      this.followFailing = false;
    } catch (error) {
      if (!this.followFailing) this.logger.warn('projection checkpoints unreadable; this follower cannot see progress', { error: message(error) });
      this.followFailing = true;
    }
    // Became the owner meanwhile: its runner moves its position itself.
    if (this.term === null) this.runner.follow(positions);
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
