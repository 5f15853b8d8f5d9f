/**
 * This instance's hold on the projection lease as the projecting code sees it: the term it holds
 * and until when, on this process's monotonic clock. Every write of the owner's runner passes
 * through check() (fenced-read-store.ts), so an owner that could not renew in time writes
 * nothing more from its deadline on, even halfway through an event, and the timer below ends
 * the hold at the deadline without waiting for the next write.
 */
export class ProjectionLeaseLost extends Error {
  constructor(reason: string) {
    super(`This instance no longer holds the projection lease: ${reason}.`);
    this.name = 'ProjectionLeaseLost';
  }
}

export type LeaseLostListener = (reason: string) => void;

export class ProjectionFence {
  private heldTerm: number | null = null;
  private deadline = Number.NEGATIVE_INFINITY;
  /** The same deadline on the wall clock: the monotonic clock stands still while the machine is suspended. */
  private wallDeadline = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners: LeaseLostListener[] = [];

  constructor(
    private readonly monotonic: () => number = () => performance.now(),
    private readonly wall: () => number = () => Date.now(),
  ) {}

  /** Called once each time a hold ends other than by release(): lapsed, or refused by the store. */
  onLost(listener: LeaseLostListener): void {
    this.listeners.push(listener);
  }

  /** The lease of `term` is held until `deadline` (monotonic milliseconds). */
  hold(term: number, deadline: number): void {
    this.heldTerm = term;
    this.extend(deadline);
  }

  /** A renewal went through: the hold lasts until `deadline`. */
  extend(deadline: number): void {
    if (this.heldTerm === null) return;
    this.deadline = deadline;
    // A resumed machine's monotonic clock missed the suspension; its wall clock did not: the hold
    // ends at whichever deadline comes first, so a resumed owner writes nothing on a lapsed lease.
    this.wallDeadline = this.wall() + (deadline - this.monotonic());
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.expire(), Math.max(0, deadline - this.monotonic()) + 1);
    this.timer.unref();
  }

  /** The held term, or null. */
  get term(): number | null {
    return this.heldTerm;
  }

  /** The held term; throws ProjectionLeaseLost when nothing is held or the hold has lapsed. */
  check(): number {
    this.expire();
    if (this.heldTerm === null) throw new ProjectionLeaseLost('the lease is not held');
    return this.heldTerm;
  }

  /** How long the hold still lasts, in milliseconds; throws ProjectionLeaseLost as check() does. */
  remainingMs(): number {
    this.check();
    return Math.min(this.deadline - this.monotonic(), this.wallDeadline - this.wall());
  }

  /** The store refused a write of this term: a newer owner took over. */
  lose(reason: string): void {
    if (this.heldTerm === null) return;
    this.end();
    for (const listener of this.listeners) listener(reason);
  }

  /** Ends the hold on purpose (a handover, a release at shutdown): no listener is told. */
  release(): void {
    this.end();
  }

  private expire(): void {
    if (this.heldTerm === null) return;
    if (this.monotonic() > this.deadline || this.wall() > this.wallDeadline) this.lose('the lease was not renewed in time');
  }

  private end(): void {
    this.heldTerm = null;
    this.deadline = Number.NEGATIVE_INFINITY;
    this.wallDeadline = Number.NEGATIVE_INFINITY;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
