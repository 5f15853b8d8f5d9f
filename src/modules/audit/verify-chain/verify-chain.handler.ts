import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { EVENT_STORE, EventStore } from '#infrastructure/event-store/event-store.port';
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

/** Recomputes the organization's chain from the log, a page at a time, up to its first break. */
@QueryHandler(VerifyAuditChain)
export class VerifyAuditChainHandler implements IQueryHandler<VerifyAuditChain, ChainReport> {
  constructor(@Inject(EVENT_STORE) private readonly eventStore: EventStore) {}

  async execute({ organization }: VerifyAuditChain): Promise<ChainReport> {
    let walk = CHAIN_WALK_START;
    let after: number | undefined;
    for (;;) {
      const page = await this.eventStore.readOrganization({ organization, after, maxCount: PAGE });
      walk = page.reduce(walkChain, walk);
      if (walk.firstBreak || page.length < PAGE) break;
      after = page[page.length - 1].position;
    }
    return { ok: walk.firstBreak === null, checked: walk.checked, unchained: walk.unchained, firstBreak: walk.firstBreak };
  }
}
