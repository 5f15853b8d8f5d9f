/**
 * The histogram median analytics answers with: exact over the histogram's values, whatever order
 * its keys come in (integer keys list in ascending order; others in insertion order).
 */
import { emptyTally, histogramMedian, mergeTallies } from './tally';

/** The median as a list of every trial's value would give it. */
function medianOfList(counts: Record<string, number>): number | null {
  const values = Object.entries(counts)
    .flatMap(([value, count]) => Array.from({ length: count }, () => Number(value)))
    .sort((a, b) => a - b);
  if (values.length === 0) return null;
  const middle = Math.floor(values.length / 2);
  return values.length % 2 === 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

describe('the histogram median', () => {
  it.each<[Record<string, number>, string]>([
    [{}, 'no trials'],
    [{ '3': 2 }, 'one value'],
    [{ '1': 1, '2': 1, '40': 1, '7': 2 }, 'integer keys, odd count'],
    [{ '1': 2, '9': 1, '1191': 3 }, 'integer keys, even count'],
    [{ '10': 1, '-5': 2, '2.5': 1 }, 'keys a list would sort differently from insertion'],
    [{ '0': 0, '5': 1 }, 'a key with no trials'],
  ])('is the median of the list of values: %j (%s)', (counts, _case) => {
    expect(histogramMedian(counts)).toBe(medianOfList(counts));
  });

  it('merges histograms and counts so that the median of the merge is that of all trials', () => {
    const a = { ...emptyTally(), verdicts: 3, passed: 2, failed: 1, commandCounts: { '2': 2, '5': 1 }, modelMsCounts: { '100': 3 } };
    const b = { ...emptyTally(), verdicts: 2, passed: 1, failed: 1, commandCounts: { '5': 1, '9': 1 }, modelMsCounts: { '50': 2 } };
    const merged = mergeTallies([a, b]);
    expect(merged).toMatchObject({ verdicts: 5, passed: 3, failed: 2, commandCounts: { '2': 2, '5': 2, '9': 1 }, modelMsCounts: { '50': 2, '100': 3 } });
    expect(histogramMedian(merged.commandCounts)).toBe(5);
    expect(histogramMedian(merged.modelMsCounts)).toBe(100);
    expect(a.commandCounts).toEqual({ '2': 2, '5': 1 });
  });
});
