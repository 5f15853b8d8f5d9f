import { OnModuleDestroy } from '@nestjs/common';
import { TooManyRequests } from '#shared/errors';

export const DEFAULT_WATCHES_PER_ORGANIZATION = 16;

/**
 * The watch streams open in this process: at most `perOrganization` at once for each
 * organization (each holds a subscription to the log and a connection), and all of them closed
 * when the server stops, so a watcher never holds a shutdown open.
 */
export class BatchWatches implements OnModuleDestroy {
  private readonly held = new Map<string, number>();
  private readonly open = new Set<() => void>();

  constructor(private readonly perOrganization: number) {}

  /** Holds a place for a stream of the organization; the answer frees it (once). 429 when none is left. */
  take(organization: string): () => void {
    const count = this.held.get(organization) ?? 0;
    if (count >= this.perOrganization) {
      throw new TooManyRequests(
        `This organization already has ${this.perOrganization} watch streams open (ASSAY_WATCH_STREAMS_PER_ORG); ` +
          'close one, or follow the batch with evals.batches.get.',
      );
    }
    this.held.set(organization, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(organization) ?? 1) - 1;
      if (left === 0) this.held.delete(organization);
      else this.held.set(organization, left);
    };
  }

  /** Registers a stream's closer until it closes on its own. */
  track(close: () => void): () => void {
    this.open.add(close);
    return () => this.open.delete(close);
  }

  onModuleDestroy(): void {
    for (const close of [...this.open]) close();
  }
}
