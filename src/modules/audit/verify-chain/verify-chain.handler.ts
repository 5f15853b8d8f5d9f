import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { AuditedEvent, ChainEnd, EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
import { KeyRing } from '#infrastructure/secrets/key-ring';
import { chainKeyIdOf, ChainKey } from '#shared/event-chain';
import { CHAIN_WALK_START, ChainBreak, walkChain } from './chain-verification';
import { VerifyAuditChain } from './verify-chain.query';

export interface ChainReport {
  ok: boolean;
  /** Hashed events checked up to the first break (all of them when ok). */
  checked: number;
  /** Events stored before the chain began (no hash to check). */
  unchained: number;
  firstBreak: ChainBreak | null;
}

const PAGE = 1000;

/**
 * Recomputes the organization's chain from the log, a page at a time, up to its first break, with
 * the chain keys the links name (the key ring's). Where the store keeps its own record of where the
 * chain ends (EventStoreDB's chain stream, SQLite's head table), the walk must reach that end:
 * removing the newest events leaves nothing after them to name their hashes, so only that record
 * shows it. The record is read before the walk, so events appended meanwhile come after the end it names.
 */
@QueryHandler(VerifyAuditChain)
export class VerifyAuditChainHandler implements IQueryHandler<VerifyAuditChain, ChainReport> {
  constructor(
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    private readonly keyRing: KeyRing,
  ) {}

  async execute({ organization }: VerifyAuditChain): Promise<ChainReport> {
    const end = (await this.eventStore.chainEnd?.(organization)) ?? null;
    const keys = new Map<string, ChainKey | undefined>();
    let walk = CHAIN_WALK_START;
    let reachedEnd = false;
    let last: AuditedEvent | undefined;
    let after: number | undefined;
    for (;;) {
      const page = await this.eventStore.readOrganization({ organization, after, maxCount: PAGE });
      await this.resolveKeys(organization, page, keys);
      walk = page.reduce((sofar, event) => walkChain(sofar, event, keys), walk);
      if (end) reachedEnd ||= page.some((event) => event.chain !== null && end.hashes.includes(event.chain.hash));
      last = page.at(-1) ?? last;
      if (walk.firstBreak || page.length < PAGE) break;
      after = page[page.length - 1].position;
    }
    // A store that keeps the record, with chained events but no record: it was deleted, and with it the check of the end.
    const recordGone = end?.absent === true && walk.lastHash !== undefined;
    const firstBreak =
      walk.firstBreak ??
      (recordGone ? missingRecord(last) : null) ??
      (end && !reachedEnd && !(end.hashes.includes(null) && walk.lastHash === undefined) ? missingEnd(end, last) : null);
    return { ok: firstBreak === null, checked: walk.checked, unchained: walk.unchained, firstBreak };
  }

  /**
   * Looks up the keys the page's links name that were not asked for yet (after a rotation, one read
   * of the organization's kept keys); one this service does not hold is remembered as undefined.
   */
  private async resolveKeys(organization: string, page: AuditedEvent[], keys: Map<string, ChainKey | undefined>): Promise<void> {
    const unasked = new Set<string>();
    for (const event of page) {
      const keyId = event.chain && chainKeyIdOf(event.chain.hash);
      if (keyId && !keys.has(keyId)) unasked.add(keyId);
    }
    if (unasked.size === 0) return;
    const found = await this.keyRing.chainKeys(organization, unasked);
    for (const keyId of unasked) keys.set(keyId, found.get(keyId));
  }
}

function missingRecord(last: AuditedEvent | undefined): ChainBreak {
  return {
    position: last?.position ?? -1,
    stream: last?.streamName ?? '',
    revision: last?.revision ?? -1,
    reason:
      "The store's record of where its chain ends is missing although the organization's events are chained: it was deleted, " +
      'so the removal of the newest events can no longer be seen; the chain is checked up to this event only.',
  };
}

/**
 * The break of a chain that stops before the end the store recorded: its newest events were
 * removed. Placed at the last event that remains (none: -1), where the chain now stops short.
 */
function missingEnd(end: ChainEnd, last: AuditedEvent | undefined): ChainBreak {
  const hash = end.hashes.find((candidate) => candidate !== null) ?? '';
  const where = end.at ? ` (${end.at.stream} at revision ${end.at.revision})` : '';
  // A keyed hash starts with its key's id: the digest is what tells events apart.
  const digest = hash.slice(hash.indexOf('.') + 1, hash.indexOf('.') + 17);
  const unsent = end.claimOnly ? ', or their writer stopped after claiming them and before sending them (the next append voids such a claim)' : '';
  return {
    position: last?.position ?? -1,
    stream: last?.streamName ?? '',
    revision: last?.revision ?? -1,
    reason:
      `The organization's newest events are missing: the store's record of its chain ends with the event of hash ${digest}…${where}, ` +
      `which the log does not hold${unsent}; the chain stops ${last ? 'at this event' : 'before its first event'}.`,
  };
}
