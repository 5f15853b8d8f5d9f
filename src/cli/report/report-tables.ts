import { table } from '../eval/summary';

/** The parts of analytics answers the report prints. */
interface Numbers {
  trials: number;
  passed: number;
  failed: number;
  voided: number;
  passRate: number | null;
  interval: { low: number; high: number } | null;
  commandMedian: number | null;
  costPerPassedTrial: { knownActualUsd: number; allocatedUsd: number; estimatedEquivalentUsd: number; incomplete: boolean } | null;
}
export interface PassRatesAnswer {
  bucket: string;
  from: string;
  to: string;
  variants: Array<{ variantKey: string; label: string; total: Numbers; buckets: Array<Numbers & { start: string }> }>;
}
export interface ComparisonAnswer {
  sides: Array<Numbers & { label: string; atK: Array<{ k: number; passAtK: number; passHatK: number }> }>;
  comparedCases: number;
  differingCases: Array<{ caseId: string; sides: Array<{ passed: number; scored: number }> }>;
  tests: Array<{ verdict: string }>;
}

const percent = (value: number) => `${(value * 100).toFixed(0)}%`;
const rate = (numbers: Numbers) =>
  numbers.passRate === null || numbers.interval === null
    ? '-'
    : `${percent(numbers.passRate)} [${percent(numbers.interval.low)}, ${percent(numbers.interval.high)}]`;
const perPass = (numbers: Numbers) => {
  const cost = numbers.costPerPassedTrial;
  if (cost === null) return '-';
  const usd = cost.knownActualUsd + cost.allocatedUsd + cost.estimatedEquivalentUsd;
  return `$${usd.toFixed(4)}${cost.incomplete ? ' +?' : ''}`;
};
const counts = (numbers: Numbers) => [String(numbers.trials), String(numbers.passed), String(numbers.failed), String(numbers.voided)];

/** One row per variant and bucket, then the variant's total; the variantKey to filter on, below. */
export function passRateTable(answer: PassRatesAnswer): string {
  if (answer.variants.length === 0) return `No trials between ${answer.from} and ${answer.to}.`;
  const header = [answer.bucket, 'variant', 'trials', 'passed', 'failed', 'void', 'pass rate [95% CI]', 'commands (median)', 'cost / pass'];
  const rows: string[][] = [];
  for (const line of answer.variants) {
    for (const bucket of line.buckets) {
      rows.push([
        bucket.start,
        line.label,
        ...counts(bucket),
        rate(bucket),
        bucket.commandMedian === null ? '-' : String(bucket.commandMedian),
        perPass(bucket),
      ]);
    }
    rows.push([
      'total',
      line.label,
      ...counts(line.total),
      rate(line.total),
      line.total.commandMedian === null ? '-' : String(line.total.commandMedian),
      perPass(line.total),
    ]);
  }
  const keys = answer.variants.map((line) => `  ${line.variantKey}  ${line.label}`);
  return [table(header, rows), '', 'Variant keys (pass one as --variant, or "variant" in analytics.passRates):', ...keys].join('\n');
}

/** The sides, their pass@k and pass^k, where they differ, and the verdicts of the paired tests. */
export function comparisonTable(answer: ComparisonAnswer): string {
  const ks = [...new Set(answer.sides.flatMap((side) => side.atK.map((entry) => entry.k)))].filter((k) => k <= 5);
  const header = ['variant', 'trials', 'passed', 'failed', 'void', 'pass rate [95% CI]', ...ks.flatMap((k) => [`pass@${k}`, `pass^${k}`]), 'cost / pass'];
  const rows = answer.sides.map((side) => {
    const atK = ks.flatMap((k) => {
      const entry = side.atK.find((candidate) => candidate.k === k);
      return entry ? [percent(entry.passAtK), percent(entry.passHatK)] : ['-', '-'];
    });
    return [side.label, ...counts(side), rate(side), ...atK, perPass(side)];
  });
  const differing = answer.differingCases.map((entry) => `  ${entry.caseId}: ${entry.sides.map((side) => `${side.passed}/${side.scored}`).join(' vs ')}`);
  return [
    table(header, rows),
    '',
    `Over ${answer.comparedCases} case${answer.comparedCases === 1 ? '' : 's'} every side ran; ${answer.differingCases.length} differ${differing.length ? ':' : '.'}`,
    ...differing,
    ...answer.tests.map((test) => test.verdict),
  ].join('\n');
}
