import type { BlobStore } from './blob-store.port';

/** Enough for the case definitions of the batches in flight, which the saga and projections reread. */
const DEFAULT_CAPACITY_CHARS = 32 * 1024 * 1024;

/**
 * Blob contents as text, the most recently used kept in memory up to a number of characters: a
 * batch's definitions are read by every projection and by the saga, a blob at a time.
 */
export class BlobTextCache {
  private readonly entries = new Map<string, string>();
  private chars = 0;

  constructor(
    private readonly blobs: BlobStore,
    private readonly capacityChars = DEFAULT_CAPACITY_CHARS,
  ) {}

  async text(sha256: string): Promise<string> {
    const cached = this.entries.get(sha256);
    if (cached !== undefined) {
      this.entries.delete(sha256);
      this.entries.set(sha256, cached);
      return cached;
    }
    const text = (await this.blobs.get(sha256)).toString('utf8');
    if (text.length <= this.capacityChars / 4) this.remember(sha256, text);
    return text;
  }

  private remember(sha256: string, text: string): void {
    this.entries.set(sha256, text);
    this.chars += text.length;
    for (const [name, value] of this.entries) {
      if (this.chars <= this.capacityChars) break;
      this.entries.delete(name);
      this.chars -= value.length;
    }
  }
}
