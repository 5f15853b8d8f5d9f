/**
 * Rows, the aligned text table every suite prints, and the measuring helpers they share
 * (an hrtime timer, percentiles, medians). Targets are reported, never enforced.
 */

/** What a row's value is held to. A ratio target compares value / baseline. */
export type Target =
  | { kind: 'ratio-at-least'; ratio: number }
  | { kind: 'ratio-at-most'; ratio: number }
  | { kind: 'at-least'; value: number; unit: string }
  | { kind: 'at-most'; value: number; unit: string };

export interface Row {
  benchmark: string;
  /** What `value` and `baseline` measure, e.g. `events/s` or `p99 ms`. */
  measure: string;
  value: number;
  /** The same measure for the baseline run side by side in the same process. */
  baseline?: number;
  /**
   * When the baseline is a floor, which one: the fastest way measured in the same run to run the
   * same processes with the same isolation (a table with any such row prints a `floor` column).
   */
  floor?: string;
  target?: Target;
}

export type Verdict = 'meets' | 'misses';

export function ratioOf(row: Row): number | undefined {
  return row.baseline === undefined || row.baseline === 0 ? undefined : row.value / row.baseline;
}

export function verdictOf(row: Row): Verdict | undefined {
  const target = row.target;
  if (!target) return undefined;
  switch (target.kind) {
    case 'ratio-at-least': {
      const ratio = ratioOf(row);
      return ratio !== undefined && ratio >= target.ratio ? 'meets' : 'misses';
    }
    case 'ratio-at-most': {
      const ratio = ratioOf(row);
      return ratio !== undefined && ratio <= target.ratio ? 'meets' : 'misses';
    }
    case 'at-least':
      return row.value >= target.value ? 'meets' : 'misses';
    case 'at-most':
      return row.value <= target.value ? 'meets' : 'misses';
  }
}

function describeTarget(target: Target | undefined): string {
  if (!target) return '-';
  switch (target.kind) {
    case 'ratio-at-least':
      return `>= ${target.ratio}x baseline`;
    case 'ratio-at-most':
      return `<= ${target.ratio}x baseline`;
    case 'at-least':
      return `>= ${formatNumber(target.value)} ${target.unit}`;
    case 'at-most':
      return `<= ${formatNumber(target.value)} ${target.unit}`;
  }
}

/** Thousands separated from 1,000 up; three significant digits below. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  if (value === 0) return '0';
  return Number(value.toPrecision(3)).toString();
}

/** Numbers read best right-aligned. */
const RIGHT_ALIGNED = new Set<string>(['value', 'baseline', 'ratio']);

function cells(row: Row, withFloor: boolean): string[] {
  const ratio = ratioOf(row);
  return [
    row.benchmark,
    row.measure,
    formatNumber(row.value),
    row.baseline === undefined ? '-' : formatNumber(row.baseline),
    ratio === undefined ? '-' : `${ratio.toFixed(2)}x`,
    ...(withFloor ? [row.floor ?? '-'] : []),
    describeTarget(row.target),
    verdictOf(row) ?? '-',
  ];
}

/** The rows as an aligned text table, one line per row, ending with a newline. */
export function formatTable(rows: readonly Row[]): string {
  const withFloor = rows.some((row) => row.floor !== undefined);
  const headers = ['benchmark', 'measure', 'value', 'baseline', 'ratio', ...(withFloor ? ['floor'] : []), 'target', 'verdict'];
  const body = rows.map((row) => cells(row, withFloor));
  const widths = headers.map((header, column) => Math.max(header.length, ...body.map((line) => line[column].length)));
  const render = (line: readonly string[]) =>
    line
      .map((cell, column) => (RIGHT_ALIGNED.has(headers[column]) ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [render(headers), rule, ...body.map(render)].join('\n') + '\n';
}

/** A stopwatch on the monotonic clock: call the returned function for the elapsed milliseconds. */
export function startTimer(): () => number {
  const started = process.hrtime.bigint();
  return () => Number(process.hrtime.bigint() - started) / 1e6;
}

/** The current monotonic time in milliseconds, for latencies measured between two points. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Nearest-rank percentile (p in 0..100) of the samples, which are left untouched. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new Error('A percentile of no samples is undefined.');
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export const p50 = (samples: readonly number[]): number => percentile(samples, 50);
export const p99 = (samples: readonly number[]): number => percentile(samples, 99);

/** The middle sample (the mean of the two middle ones for an even count). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) throw new Error('A median of no samples is undefined.');
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
