import type { RouteAnswer } from '#infrastructure/http/openapi/openapi-document';
import { anyObject, boolean, integer, list, number, object, oneOf, orNull, ref, text, time } from './schema-builders';

const costs = object({ knownActualUsd: number, allocatedUsd: number, estimatedEquivalentUsd: number, incomplete: boolean });
const tally = {
  trials: integer,
  scored: integer,
  passed: integer,
  failed: integer,
  voided: integer,
  passRate: orNull(number),
  interval: orNull(object({ low: number, high: number })),
  costs,
  costPerPassedTrial: orNull(costs),
  commandMedian: orNull(number),
  modelMsMedian: orNull(number),
};
const variant = object({ harness: text, model: text, profileVersion: orNull(text), profileName: orNull(text) });
const judgeUse = object({
  provider: text,
  models: list(text),
  calls: integer,
  inputTokens: integer,
  outputTokens: integer,
  cacheReadTokens: integer,
  cacheWriteTokens: integer,
  totalTokens: integer,
  usd: orNull(number),
});

/** The answers of the analytics operations and of a run's rescore. */
export const ANALYTICS_ANSWERS: Record<string, RouteAnswer> = {
  'analytics.passRates': {
    summary: 'Scored and passed trials per variant definition per time bucket, with Wilson intervals and costs',
    answer: object({
      bucket: oneOf('hour', 'day', 'week'),
      from: time,
      to: time,
      suiteId: orNull(text),
      caseId: orNull(text),
      variants: list(
        object({
          variantKey: text,
          variant,
          label: text,
          total: object(tally),
          buckets: list(object({ start: time, end: time, ...tally })),
        }),
      ),
    }),
    errors: [400, 403, 404],
  },
  'analytics.compare': {
    summary: 'Variants side by side over the same cases: pass rates, pass@k and pass^k, the cases that differ, a paired test and the difference by bootstrap',
    answer: object({
      sides: list(
        object({
          ...tally,
          label: text,
          batchId: orNull(text),
          variantKey: text,
          variant,
          atK: list(object({ k: integer, passAtK: number, passHatK: number })),
        }),
      ),
      comparedCases: integer,
      unpairedCases: list(text),
      differingCases: list(object({ caseId: text, caseName: text, sides: list(object({ label: text, passed: integer, scored: integer, passRate: number })) })),
      tests: list(
        object({
          baseline: text,
          other: text,
          method: text,
          comparedCases: integer,
          differingCases: integer,
          pValue: orNull(number),
          smallestPossiblePValue: number,
          casesNeeded: integer,
          significant: boolean,
          conclusion: oneOf('difference', 'no-significant-difference', 'no-difference', 'too-few-cases', 'nothing-to-compare'),
          difference: orNull(object({ estimate: number, interval: orNull(object({ low: number, high: number })), method: text })),
          verdict: text,
        }),
      ),
    }),
    errors: [400, 403, 404],
  },
  'analytics.flaky': {
    summary: 'Cases whose trials disagree most, by variant',
    answer: object({
      suiteId: orNull(text),
      cases: list(
        object({
          ...tally,
          suiteId: text,
          caseId: text,
          caseName: text,
          variantKey: text,
          variant,
          label: text,
          flakiness: number,
          runs: integer,
          mixedRuns: integer,
        }),
      ),
      total: integer,
    }),
    errors: [400, 403, 404],
  },
  'evals.runs.rescore': {
    summary: "A new judge over a finished run's stored conversations; the original results stay as they were",
    answer: object({
      rescoreId: text,
      runId: text,
      validator: anyObject,
      original: ref('Distribution'),
      rescored: ref('Distribution'),
      trials: list(object({ id: text, ordinal: integer, original: text, rescored: oneOf('passed', 'failed', 'void'), validations: list(anyObject) })),
      judge: orNull(judgeUse),
      rescoredAt: time,
    }),
    errors: [400, 403, 404, 409, 502],
  },
};
