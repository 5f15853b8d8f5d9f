import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { ChainKey } from '#shared/event-chain';
import { AppendResult, AppendTooLarge, AuditedEvent, ChainEnd, ExpectedRevision, NewEvent, RecordedEvent, WrongExpectedVersion } from '../event-store.port';
import { ChainClaim, chainStreamOf, claimEvent, EMPTY_HEAD, linkAppend, organizationsOf, SettledHead, tipOf, voidEvent } from './organization-chain';
import { AppendRefused, LeaderLost } from './append-errors';
import { OrganizationLocks } from './organization-locks';

/** What the chain needs of the adapter: reads from the leader, and the server's own append. */
export interface ChainIo {
  /** The stream's last event, or undefined when it does not exist. */
  readLast(stream: string): Promise<RecordedEvent | undefined>;
  /** The event at a revision, with its link. */
  readAt(stream: string, revision: number): Promise<AuditedEvent | undefined>;
  /**
   * One append as the server takes it: the port's WrongExpectedVersion and AppendTooLarge, or
   * another error when its outcome is unknown. `recognisedRetry` when the server stored nothing
   * because the same ids were already there.
   */
  write(stream: string, events: NewEvent[], expected: ExpectedRevision, deadlineMs?: number): Promise<AppendResult & { recognisedRetry: boolean }>;
  /** The original result when these events were appended before (the adapter's idempotency): a read of the stream's tail. */
  earlierAppend(stream: string, events: NewEvent[]): Promise<AppendResult | undefined>;
  /** The same without a read, when the ids held cover the stream through `revision`: null for none; undefined when a read must tell. */
  heldAnswer(stream: string, events: NewEvent[], revision: number): AppendResult | null | undefined;
  /** earlierAppend, with the stream's last revision as that read found it (-1: no stream). */
  lookUp(stream: string, events: NewEvent[]): Promise<{ earlier: AppendResult | undefined; lastRevision: number }>;
  /** Events this writer has just stored at `firstRevision` on, the last at `lastPosition`. */
  remember(stream: string, firstRevision: number, events: NewEvent[], lastPosition: number): void;
  /** Throws AppendTooLarge when the events, as stored, are more than one append may carry. */
  checkSize(stream: string, events: NewEvent[]): void;
}

export interface ChainTiming {
  /**
   * How long a claim whose events have not landed holds the organization's chain before another
   * writer voids it (its writer crashed). A writer sends its events within a third of it, so a
   * claim is never voided while its events may still be on their way.
   */
  leaseMs: number;
  /** A monotonic clock in milliseconds (tests give their own). */
  monotonicMs?: () => number;
  /** The key the links are computed under; without one (tests, tools) they are unkeyed sha256. */
  chainKey?: ChainKey;
}

/** Well below a trial lease (the configuration keeps it under a quarter of one). */
export const DEFAULT_CHAIN_LEASE_MS = 5_000;
const MAX_ATTEMPTS = 100;
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 200;

interface HeldClaim {
  organization: string;
  /** The claim's revision in the chain stream. */
  revision: number;
  /** The claim's position in `$all`: events appended after it are stored after it. */
  position: number;
  id: string;
  claim: ChainClaim;
}

const RETRY = Symbol('retry');
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Appends of organizations' events with their links in each organization's chain (see
 * organization-chain.ts): claim the next links at the chain stream's revision read, append the
 * events at a known revision, and let the next writer settle a claim whose events did not land.
 *
 * Why the claim comes first: the links are inside the events, which cannot change once stored.
 * Appending the events first and advancing the head after would let two writers link to the same
 * head and store both, a fork no retry can mend. With the claim first, the chain stream's
 * expected revision serializes one organization's writers, and a claim is settled before the
 * next one is made, so chain order is `$all` order (what `audit.verify` walks).
 *
 * A claim is settled by whoever reads it next, by looking where its events go: the first one is
 * there (they landed: link after them); another event holds that revision (the append was
 * refused and can never land, since it expects that revision: void the claim); nothing is there
 * yet (in flight, or its writer died): wait, and void it once it held the chain for `leaseMs`.
 * A writer whose append was refused voids its own claim at once.
 */
export class ChainedAppends {
  /** Heads this process settled itself, so its next append claims without reading first. */
  private readonly heads = new Map<string, SettledHead>();
  private readonly locks = new OrganizationLocks();
  /** Claims whose events this process never sent (the claim's own write failed mid-way). */
  private readonly unsent = new Set<string>();
  private readonly now: () => number;

  constructor(
    private readonly io: ChainIo,
    private readonly timing: ChainTiming,
  ) {
    this.now = timing.monotonicMs ?? (() => performance.now());
  }

  /** Appends events of which at least one belongs to an organization, or answers an earlier append of the same ids. */
  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const organizations = organizationsOf(events);
    return this.locks.holding(organizations, async () => {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        if (attempt > 1) await sleep(Math.min(MAX_POLL_MS, FIRST_POLL_MS * attempt) * Math.random());
        const outcome = await this.attempt(stream, events, expected, organizations);
        if (outcome !== RETRY) return outcome;
      }
      throw new Error(`The audit chain of ${organizations.join(', ')} could not be advanced after ${MAX_ATTEMPTS} attempts.`);
    });
  }

  private async attempt(stream: string, events: NewEvent[], expected: ExpectedRevision, organizations: string[]): Promise<AppendResult | typeof RETRY> {
    const heads = new Map<string, SettledHead>();
    for (const organization of organizations) heads.set(organization, this.heads.get(organization) ?? (await this.settledHead(organization)));
    // Looked at once the heads are settled: a claim settled meanwhile may have been another
    // instance's append of these very ids (two sagas reacting to one event).
    const target = await this.target(stream, events, expected);
    if (typeof target !== 'number') return target;
    const base = target;
    const { stored, claims } = linkAppend(stream, events, base + 1, new Date().toISOString(), heads, this.timing.chainKey ?? null);
    this.io.checkSize(stream, stored);
    const claimedAt = this.now();
    const held = await this.claim(claims, heads);
    if (!held) return RETRY;
    // Sent within a third of the lease from the first claim, or not at all: never voided in flight.
    const deadlineMs = Math.floor(this.timing.leaseMs / 3 - (this.now() - claimedAt));
    if (deadlineMs <= 0) {
      await this.voidOwn(held, 'its writer could not send the events in time');
      return RETRY;
    }
    const known = expected === 'any' || expected === 'stream_exists' ? (base === -1 ? 'no_stream' : base) : expected;
    try {
      const { recognisedRetry, ...result } = await this.io.write(stream, stored, known, deadlineMs);
      // The same ids landed meanwhile (a retry through another instance), with their own links: the
      // server answers such an append with the original's position, which is before the claim's.
      if (recognisedRetry || result.position < Math.min(...held.map((claim) => claim.position))) {
        await this.voidOwn(held, 'its events were stored by an earlier append of the same ids');
      } else {
        for (const { organization, revision, claim } of held) this.heads.set(organization, { revision, hash: claim.hash });
        this.io.remember(stream, base + 1, stored, result.position);
      }
      return result;
    } catch (error) {
      return this.afterRefusal(error, stream, events, expected, held);
    }
  }

  private async afterRefusal(
    error: unknown,
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    held: HeldClaim[],
  ): Promise<AppendResult | typeof RETRY> {
    if (error instanceof WrongExpectedVersion) {
      await this.voidOwn(held, 'the append it was made for was refused: its stream had moved on');
      const retried = await this.io.earlierAppend(stream, events);
      if (retried) return retried;
      // `any` and `stream_exists` were sent as the revision read: another read, another try.
      if (expected === 'any' || (expected === 'stream_exists' && error.actual !== -1)) return RETRY;
      throw new WrongExpectedVersion(stream, expected, error.actual);
    }
    if (error instanceof AppendTooLarge) {
      await this.voidOwn(held, 'the append it was made for was too large to store');
      throw error;
    }
    if (error instanceof AppendRefused) {
      await this.voidOwn(held, `the server refused the append it was made for (${error.reason})`);
      throw error;
    }
    for (const { organization } of held) this.heads.delete(organization);
    const landed: { read: boolean; found?: AppendResult } = await this.io.earlierAppend(stream, events).then(
      (found) => ({ read: true, found }),
      () => ({ read: false }),
    );
    if (landed.found) return landed.found;
    // Not on the leader after a NotLeader answer: an old leader's uncommitted write never lands.
    if (error instanceof LeaderLost && landed.read) {
      await this.voidOwn(held, 'the node it was sent to was not the leader, and the leader has not got its events');
      throw error;
    }
    // The outcome is unknown (the connection failed, a timeout): the events may still land, and
    // the claim must hold until they cannot. Left to the lease.
    throw error;
  }

  /**
   * The revision the append's first event will have, less one (-1 for a new stream), or the
   * original result when these ids were appended before. Reads the stream only when it must:
   * - `no_stream`: never. A stream that exists refuses the append (and a refusal looks for the
   *   ids), or the server recognises the same ids at the same revisions and answers the original.
   * - a revision: not when the ids this writer holds cover the stream through it (its own last
   *   append, typically). Events beyond it make the server refuse or recognise the append.
   * - `any`, `stream_exists`: one read of the stream's tail gives both the ids and the revision.
   */
  private async target(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<number | AppendResult> {
    if (expected === 'no_stream') return -1;
    if (typeof expected === 'number') {
      const held = this.io.heldAnswer(stream, events, expected);
      if (held === null) return expected;
      return held ?? (await this.io.earlierAppend(stream, events)) ?? expected;
    }
    const { earlier, lastRevision: last } = await this.io.lookUp(stream, events);
    if (earlier) return earlier;
    if (expected === 'stream_exists' && last === -1) throw new WrongExpectedVersion(stream, expected, -1);
    return last;
  }

  /** Claims every organization's links, or none (null: another writer claimed first). */
  private async claim(claims: Map<string, ChainClaim>, heads: Map<string, SettledHead>): Promise<HeldClaim[] | null> {
    const held: HeldClaim[] = [];
    for (const [organization, claim] of [...claims].sort(([a], [b]) => a.localeCompare(b))) {
      const head = heads.get(organization) ?? EMPTY_HEAD;
      const id = randomUUID();
      let position: number;
      try {
        ({ position } = await this.io.write(
          chainStreamOf(organization),
          [claimEvent(organization, id, claim)],
          head.revision === -1 ? 'no_stream' : head.revision,
        ));
      } catch (error) {
        this.heads.delete(organization);
        if (!(error instanceof WrongExpectedVersion)) this.unsent.add(id);
        await this.voidOwn(held, 'another writer claimed the chain of one of its organizations first');
        if (error instanceof WrongExpectedVersion) return null;
        throw error;
      }
      held.push({ organization, revision: head.revision + 1, position, id, claim });
    }
    return held;
  }

  /**
   * Voids claims of this process whose events were not stored; a conflict means another writer
   * settled them. One that cannot be voided now is voided by this process when next seen.
   */
  private async voidOwn(held: HeldClaim[], reason: string): Promise<void> {
    for (const { organization, revision, id, claim } of held) {
      this.heads.delete(organization);
      this.unsent.add(id);
      const settled = await this.voidClaim(organization, revision, claim, reason).then(
        () => true,
        () => false,
      );
      if (settled) this.unsent.delete(id);
    }
  }

  private async voidClaim(organization: string, revision: number, claim: ChainClaim, reason: string): Promise<SettledHead | null> {
    try {
      await this.io.write(
        chainStreamOf(organization),
        [voidEvent(organization, randomUUID(), { claimRevision: revision, head: claim.prevHash, reason })],
        revision,
      );
      return { revision: revision + 1, hash: claim.prevHash };
    } catch (error) {
      if (error instanceof WrongExpectedVersion) return null;
      throw error;
    }
  }

  /**
   * Where the chain stream says the organization's chain ends, read without settling anything
   * (for audit.verify, which writes nothing): the head a void put back, a claim whose events
   * landed, or, for a claim not settled yet, the head it found or its own hash. A claim made
   * longer than the lease ago whose events are not there is the end (`claimOnly`): a live writer
   * has landed or voided its claim by then, so its events were removed, or its writer stopped
   * between claim and append (which the next append of the organization settles).
   */
  async recordedEnd(organization: string): Promise<ChainEnd | null> {
    const last = await this.io.readLast(chainStreamOf(organization));
    if (!last) return { hashes: [null], at: null, absent: true };
    const tip = tipOf(last);
    if (tip.kind === 'settled') return { hashes: [tip.head.hash], at: null };
    const { claim } = tip;
    const at = { stream: claim.stream, revision: claim.revision };
    const outcome = await this.outcomeOf(claim);
    if (outcome === 'landed') return { hashes: [claim.hash], at };
    // Wall clocks, the claim's writer's and this one's: the lease is seconds, far above their drift.
    if (outcome === 'pending' && Date.now() - Date.parse(claim.recordedAt) > this.timing.leaseMs) return { hashes: [claim.hash], at, claimOnly: true };
    return { hashes: [claim.prevHash, claim.hash], at: null };
  }

  /** The organization's head once its last claim is settled: waits for one in flight, voids one that cannot land. */
  private async settledHead(organization: string): Promise<SettledHead> {
    let pending: { claimId: string; since: number } | undefined;
    let pollMs = FIRST_POLL_MS;
    for (;;) {
      const tip = tipOf(await this.io.readLast(chainStreamOf(organization)));
      if (tip.kind === 'settled') return tip.head;
      const { claim, claimId, revision } = tip;
      const outcome = this.unsent.has(claimId) ? 'refused' : await this.outcomeOf(claim);
      if (outcome === 'landed') return { revision, hash: claim.hash };
      if (outcome === 'pending') {
        if (pending?.claimId !== claimId) pending = { claimId, since: this.now() };
        if (this.now() - pending.since < this.timing.leaseMs) {
          await sleep(pollMs);
          pollMs = Math.min(MAX_POLL_MS, pollMs * 2);
          continue;
        }
      }
      const reason =
        outcome === 'refused'
          ? `its events can never land: ${claim.stream} holds other events at their revisions, or their writer never sent them`
          : `its events had not landed after ${this.timing.leaseMs} ms: their writer stopped`;
      const voided = await this.voidClaim(organization, revision, claim, reason);
      this.unsent.delete(claimId);
      if (voided) return voided;
    }
  }

  /**
   * Whether a claim's append landed: its organization's last event is stored with the claimed
   * hash. Another event at its first revision means it never can (it expected that revision).
   */
  private async outcomeOf(claim: ChainClaim): Promise<'landed' | 'refused' | 'pending'> {
    const last = await this.io.readAt(claim.stream, claim.revision);
    if (last) return last.chain?.hash === claim.hash ? 'landed' : 'refused';
    const first = claim.firstRevision === claim.revision ? undefined : await this.io.readAt(claim.stream, claim.firstRevision);
    return first ? 'refused' : 'pending';
  }
}
