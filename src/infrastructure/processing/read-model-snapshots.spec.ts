import { SNAPSHOT_DOCUMENTS_PER_EVENT, snapshotInterval } from './read-model-snapshots';

describe('snapshotInterval', () => {
  it('is ASSAY_SNAPSHOT_EVERY while the state is small, up to the boundary', () => {
    expect(snapshotInterval(10_000, 0)).toBe(10_000);
    expect(snapshotInterval(10_000, 10_000 * SNAPSHOT_DOCUMENTS_PER_EVENT)).toBe(10_000);
  });

  it('grows with the state past the boundary, so each event pays for a bounded number of documents', () => {
    expect(snapshotInterval(10_000, 10_000 * SNAPSHOT_DOCUMENTS_PER_EVENT + 1)).toBe(10_001);
    expect(snapshotInterval(10_000, 1_000_000 * SNAPSHOT_DOCUMENTS_PER_EVENT)).toBe(1_000_000);
    for (const documents of [1, 999, 123_456, 5_000_000]) {
      expect(documents / snapshotInterval(20, documents)).toBeLessThanOrEqual(SNAPSHOT_DOCUMENTS_PER_EVENT);
    }
  });
});
