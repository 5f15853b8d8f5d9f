import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { AuditedEvent, ChainEnd, EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
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
 * Recomputes the organization's chain from the log, a page at a time, up to its first break.
 * Where the store keeps its own record of where the chain ends (EventStoreDB), the walk must reach
 * that end: removing the newest events leaves nothing after them to name their hashes, so only
 * that record shows it. The record is read before the walk, so events appended meanwhile come
 * after the end it names.
 */
@QueryHandler(VerifyAuditChain)
export class VerifyAuditChainHandler implements IQueryHandler<VerifyAuditChain, ChainReport> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ organization }: VerifyAuditChain): Promise<ChainReport> {
    const end = (await this.eventStore.chainEnd?.(organization)) ?? null;
    let walk = CHAIN_WALK_START;
    let reachedEnd = false;
    let last: AuditedEvent | undefined;
    let after: number | undefined;
    for (;;) {
      const page = await this.eventStore.readOrganization({ organization, after, maxCount: PAGE });
      walk = page.reduce(walkChain, walk);
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
  return {
    position: last?.position ?? -1,
    stream: last?.streamName ?? '',
    revision: last?.revision ?? -1,
    reason:
      `The organization's newest events are missing: the store's record of its chain ends with the event of hash ${hash.slice(0, 16)}…${where}, ` +
      `which the log no longer holds; the chain stops ${last ? 'at this event' : 'before its first event'}.`,
  };
}
