/**
 * `assay projections rebuild` on a shared MongoDB read store, while servers run and answer:
 * 1. replay the whole log into new collections, `<name>__rebuild_<id>` (the projections write
 *    through a SuffixedReadStore and never notice), while the owner keeps the live ones current;
 *    their writes go in ordered bulks (batched-replay.ts), still guarded by position;
 * 2. take the projection lease: ask the owner to hand it over (it stops projecting after writing
 *    its checkpoint), or take it once expired when there is no owner;
 * 3. holding the lease, nobody projects into the live collections: catch the rebuilt ones up
 *    with the log's head, then rename each onto its live name (renameCollection, dropTarget),
 *    the checkpoints last, stamped with the rebuild's term; each rename is fenced by the hold
 *    (projection-fence.ts), so a rebuild whose lease lapsed swaps nothing more;
 * 4. release the lease: the next owner resumes from the swapped checkpoints, so no event
 *    appended meanwhile is lost, and none is applied twice.
 * Readers see the old collection or the new one at every moment; between the handover and the
 * release the documents do not move (writes wait for their read-your-writes bound).
 */
import type { EventStore } from '../event-store/event-store.port';
import type { JsonLogger } from '../logging/json-logger';
import type { ReadStore } from '../read-store/read-store.port';
import { SuffixedReadStore } from '../read-store/suffixed-read-store';
import type { Projection } from './projection';
import { FencedReadStore } from './fenced-read-store';
import { HOLD_SHARE } from './projection-election';
import { ProjectionFence } from './projection-fence';
import { LeaseGrant, PROJECTION_RUNNER, ProjectionLease } from './projection-lease';
import { CHECKPOINTS, ProjectionRunner } from './projection-runner';

/** What marks a rebuild's collections: `<name>__rebuild_<id>`. */
export const REBUILD_MARK = '__rebuild_';

export interface RebuildSettings {
  /** ASSAY_PROJECTION_LEASE_MS: how long the rebuild's own hold on the lease lasts unless renewed. */
  leaseMs: number;
  /** Between two attempts at the lease while the owner hands it over. */
  pollMs?: number;
  /** How long to wait for the lease; by default two leases and 10 s. */
  handoverTimeoutMs?: number;
  clock?: () => number;
}

export interface RebuildReport {
  id: string;
  /** The log position the swapped read models reflect. */
  position: number;
  collections: Array<{ collection: string; documents: number }>;
}

export async function rebuildAndSwap(
  eventStore: EventStore,
  store: ReadStore,
  projections: readonly Projection[],
  settings: RebuildSettings,
  logger: JsonLogger,
): Promise<RebuildReport> {
  const id = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const rebuilt = new SuffixedReadStore(store, `${REBUILD_MARK}${id}`);
  await dropLeftovers(store, logger);
  // Nobody else writes the new collections: the replay sends its writes in ordered bulks.
  const runner = new ProjectionRunner(eventStore, rebuilt, projections, logger, undefined, { batchedCatchUp: true });
  const lease = new ProjectionLease(store, PROJECTION_RUNNER, `rebuild-${id}`, settings.leaseMs, settings.clock);
  let grant: LeaseGrant | null = null;
  const monotonic = () => performance.now();
  const fence = new ProjectionFence(monotonic);
  let keeper: NodeJS.Timeout | null = null;
  let replaying = true;
  const stopReplaying = async () => {
    if (replaying) await runner.stop();
    replaying = false;
  };
  try {
    logger.info('rebuilding the read models into new collections; servers keep serving the live ones', { suffix: rebuilt.suffix });
    await runner.start();
    const taken = await takeLease(lease, settings, logger);
    grant = taken.grant;
    const term = grant.term;
    // The swap is fenced like an owner's writes: once the hold lapses (renewals failing, or the
    // lease taken by another), no rename or drop goes out.
    fence.hold(term, taken.sentAt + settings.leaseMs * HOLD_SHARE);
    keeper = setInterval(() => void keepHold(lease, fence, term, settings.leaseMs, monotonic), settings.leaseMs / 3);
    // Nobody projects into the live collections now: what the log holds beyond them is the rebuild's to apply.
    await runner.waitFor(await eventStore.headPosition(), Number.POSITIVE_INFINITY);
    await stopReplaying();
    await rebuilt.collection(CHECKPOINTS).updateMany({}, { $set: { term } });
    const renewal = await lease.renew(term, false);
    if (renewal.outcome !== 'renewed')
      throw new Error(`The projection lease was lost before the swap (${renewal.outcome}); the live read models are unchanged.`);
    const collections = await swap(new FencedReadStore(store, fence), rebuilt, projections);
    logger.info('rebuilt read models swapped in', { position: runner.position, collections: collections.length });
    return { id, position: runner.position, collections };
  } finally {
    if (keeper) clearInterval(keeper);
    fence.release();
    await stopReplaying();
    const letGo = grant ? lease.release(grant.term) : lease.withdrawHandover();
    await letGo.catch((error: unknown) =>
      logger.warn('projection lease not let go; it expires by itself', { error: error instanceof Error ? error.message : String(error) }),
    );
  }
}

/** Collections of an earlier rebuild that did not finish (one rebuild runs at a time). */
async function dropLeftovers(store: ReadStore, logger: JsonLogger): Promise<void> {
  for (const name of await store.collectionNames()) {
    if (!name.includes(REBUILD_MARK)) continue;
    await store.dropCollection(name);
    logger.info('dropped the collection of an unfinished rebuild', { collection: name });
  }
}

/** One renewal of the rebuild's hold: extended when renewed, lost when another holds the lease; a failed call lets it lapse. */
async function keepHold(lease: ProjectionLease, fence: ProjectionFence, term: number, leaseMs: number, monotonic: () => number): Promise<void> {
  const sentAt = monotonic();
  try {
    const renewal = await lease.renew(term, false);
    if (renewal.outcome === 'renewed') fence.extend(sentAt + leaseMs * HOLD_SHARE);
    else fence.lose(`the projection lease is ${renewal.outcome === 'lost' ? `held by ${renewal.owner ?? 'nobody'}` : 'being handed over'}`);
  } catch {
    // Unreachable for now: the hold runs out at its deadline unless a later renewal goes through.
  }
}

/** Waits for the owner to hand the lease over (asking at each attempt), or for it to expire; `sentAt`: when the granting call was sent. */
async function takeLease(lease: ProjectionLease, settings: RebuildSettings, logger: JsonLogger): Promise<{ grant: LeaseGrant; sentAt: number }> {
  const timeoutMs = settings.handoverTimeoutMs ?? 2 * settings.leaseMs + 10_000;
  const started = Date.now();
  for (let attempt = 0; ; attempt += 1) {
    const sentAt = performance.now();
    const grant = await lease.acquire();
    if (grant) {
      logger.info('projection lease taken for the swap', { term: grant.term });
      return { grant, sentAt };
    }
    await lease.requestHandover();
    if (attempt === 0) logger.info('asked the projection owner to hand over its lease', { owner: (await lease.current())?.owner ?? null });
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        `The projection owner did not hand over its lease within ${timeoutMs} ms; the live read models are unchanged. Check that every instance runs this release, then run the rebuild again.`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, settings.pollMs ?? 200));
  }
}

/**
 * Every rebuilt collection onto its live name, a live one the rebuild left empty dropped, the
 * checkpoints last: an interrupted swap leaves the old checkpoints, from which the next owner
 * replays over both old and new collections, which their position guards make harmless.
 */
async function swap(store: ReadStore, rebuilt: SuffixedReadStore, projections: readonly Projection[]): Promise<RebuildReport['collections']> {
  const produced = new Set(await rebuilt.collectionNames());
  const declared = projections.flatMap((projection) => Object.keys(projection.collections));
  const names = [...new Set([...declared, ...produced])].filter((name) => name !== CHECKPOINTS).sort();
  const swapped: RebuildReport['collections'] = [];
  for (const name of [...names, CHECKPOINTS]) {
    if (!produced.has(name)) {
      await store.dropCollection(name);
      continue;
    }
    const documents = await rebuilt.collection(name).count({});
    await store.renameCollection(name + rebuilt.suffix, name);
    swapped.push({ collection: name, documents });
  }
  return swapped;
}
