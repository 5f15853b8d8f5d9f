import type { EventStore, OrganizationReadOptions } from '#infrastructure/event-store/event-store.port';
import { canonicalJson } from '#shared/hash';
import { EXPORT_CHAIN_START, nextExportHash } from '#shared/event-chain';
import { auditEventView } from '../audit-event.view';

const PAGE = 500;

/** The last line of an export: what `assay audit verify` checks the event lines against. */
export interface ExportTrailer {
  count: number;
  /** h_n of #shared/event-chain's export chain over the event lines. */
  chainHash: string;
  chain: 'sha256(previous hash + canonical JSON of the line), from 64 zeros';
  organization: string;
  /** The newest log position the export covers: events appended during the export are left out. */
  headPosition: number;
  from: string | null;
  to: string | null;
  categories: string[] | null;
}

/**
 * The export, line by line: one page of the log in memory at a time, never the whole answer.
 * It stops at the log's head as it was when the export began, so the file is one consistent cut.
 */
export async function* exportLines(eventStore: EventStore, options: OrganizationReadOptions): AsyncGenerator<string> {
  const headPosition = await eventStore.headPosition();
  let chainHash = EXPORT_CHAIN_START;
  let count = 0;
  let after = options.after;
  for (;;) {
    const page = (await eventStore.readOrganization({ ...options, after, maxCount: PAGE })).filter((event) => event.position <= headPosition);
    for (const event of page) {
      const line = auditEventView(event);
      chainHash = nextExportHash(chainHash, line);
      count += 1;
      yield `${canonicalJson(line)}\n`;
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1].position;
  }
  const trailer: ExportTrailer = {
    count,
    chainHash,
    chain: 'sha256(previous hash + canonical JSON of the line), from 64 zeros',
    organization: options.organization,
    headPosition,
    from: options.from ?? null,
    to: options.to ?? null,
    categories: options.categories ?? null,
  };
  yield `${canonicalJson({ trailer })}\n`;
}
