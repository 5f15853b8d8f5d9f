/**
 * The projection lease: which instance projects the event log into a shared read store. One
 * document per runner in `projection_leases`, changed only by writes whose filter carries their
 * condition, so of several instances racing for it exactly one wins, on the in-memory store and
 * on MongoDB alike (the ReadStore port). Timers live in projection-election.ts; this is the
 * store's side only.
 */
import { Collection, Document, DuplicateKey, ReadStore } from '../read-store/read-store.port';

export const PROJECTION_LEASES = 'projection_leases';
/** The lease of the service's one projection runner: its document's `_id`. */
export const PROJECTION_RUNNER = 'projections';

export interface LeaseDocument extends Document {
  /** The instance holding (or that last held) the lease: its ASSAY_INSTANCE_ID. */
  owner: string;
  /** Epoch milliseconds by the clock of the instance that wrote it; past it, anyone may take the lease. */
  expiresAt: number;
  /** The fencing token: raised by every acquisition, so a replaced owner's term is always lower. */
  term: number;
  /** An instance that asked the owner to hand the lease over (`assay projections rebuild`). */
  handoverTo?: string;
}

export interface LeaseGrant {
  term: number;
  expiresAt: number;
}

export type Renewal =
  | { outcome: 'renewed'; expiresAt: number }
  /** Not renewed: `to` asked for the lease; the owner should hand it over now. */
  | { outcome: 'handover'; to: string }
  /** Another instance holds it now (or it was released): stop projecting. */
  | { outcome: 'lost'; owner: string | null };

export class ProjectionLease {
  private readonly leases: Collection<LeaseDocument>;

  constructor(
    store: ReadStore,
    /** The runner whose lease this is: the document's `_id`. */
    readonly name: string,
    /** Who asks: this instance's id. */
    readonly holder: string,
    readonly leaseMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.leases = store.collection<LeaseDocument>(PROJECTION_LEASES);
  }

  /**
   * Takes the lease when nobody holds it, it has expired, or it is already this holder's (an
   * earlier life under the same id, or a handover to it), in a new term. Null while another
   * holder's lease runs: the conditional upsert then meets the document and fails DuplicateKey.
   */
  async acquire(): Promise<LeaseGrant | null> {
    const now = this.clock();
    try {
      await this.leases.updateOne(
        { _id: this.name, $or: [{ expiresAt: { $lt: now } }, { owner: this.holder }] },
        { $set: { owner: this.holder, expiresAt: now + this.leaseMs }, $inc: { term: 1 } },
        { upsert: true },
      );
    } catch (error) {
      if (error instanceof DuplicateKey) return null;
      throw error;
    }
    // Nobody else can change it before it expires, a whole lease from now.
    const taken = await this.leases.findOne({ _id: this.name, owner: this.holder });
    if (taken === null) return null;
    if (taken.handoverTo === this.holder) await this.leases.updateOne({ _id: this.name, owner: this.holder, term: taken.term }, { $unset: { handoverTo: '' } });
    return { term: taken.term, expiresAt: taken.expiresAt };
  }

  /**
   * Extends the lease of `term`, unless it changed hands or, when `honourHandover`, someone asked
   * for it (a rebuild holding the lease for its swap keeps it whoever asks).
   */
  async renew(term: number, honourHandover = true): Promise<Renewal> {
    const expiresAt = this.clock() + this.leaseMs;
    const filter = { _id: this.name, owner: this.holder, term, ...(honourHandover ? { handoverTo: { $exists: false } } : {}) };
    const renewed = await this.leases.updateOne(filter, { $set: { expiresAt } });
    if (renewed.matchedCount === 1) return { outcome: 'renewed', expiresAt };
    const stored = await this.leases.findOne({ _id: this.name });
    if (stored?.owner === this.holder && stored.term === term && stored.handoverTo !== undefined) return { outcome: 'handover', to: stored.handoverTo };
    return { outcome: 'lost', owner: stored?.owner ?? null };
  }

  /** Gives the lease of `term` to `to` in a new term, running a whole lease from now; false when it was not this holder's any more. */
  async handOver(term: number, to: string): Promise<boolean> {
    const result = await this.leases.updateOne(
      { _id: this.name, owner: this.holder, term },
      { $set: { owner: to, expiresAt: this.clock() + this.leaseMs }, $inc: { term: 1 }, $unset: { handoverTo: '' } },
    );
    return result.matchedCount === 1;
  }

  /** Asks whoever holds the lease to hand it over to this holder at their next renewal. */
  async requestHandover(): Promise<void> {
    await this.leases.updateOne({ _id: this.name, owner: { $ne: this.holder } }, { $set: { handoverTo: this.holder } });
  }

  /** Takes back this holder's request for the lease (it stopped waiting for it). */
  async withdrawHandover(): Promise<void> {
    await this.leases.updateOne({ _id: this.name, handoverTo: this.holder }, { $unset: { handoverTo: '' } });
  }

  /** Ends the lease of `term` now, so that another instance takes it at its next attempt rather than after expiry. */
  async release(term: number): Promise<void> {
    await this.leases.updateOne({ _id: this.name, owner: this.holder, term }, { $set: { expiresAt: 0 } });
  }

  /** The lease as stored, or null before anyone took it. */
  current(): Promise<LeaseDocument | null> {
    return this.leases.findOne({ _id: this.name });
  }
}
