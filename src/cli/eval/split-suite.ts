import { MAX_TRIALS_PER_BATCH } from '#modules/evals/batches/start-rules';

type Json = Record<string, unknown>;

/** The most cases a batch holds (the API's bound), whatever their trials. */
const MAX_CASES_PER_BATCH = 100;

/** One batch of a suite: the start body, and the index of its first case in the suite's cases. */
export interface BatchPart {
  body: Json;
  firstCase: number;
}

/** How many trials one case asks for (its variants × trials); null when the body does not say yet. */
export function trialsPerCase(body: Json): number | null {
  const variants = Array.isArray(body.variants) ? body.variants.length : 0;
  const trials = body.trials;
  if (variants === 0 || typeof trials !== 'number' || !Number.isInteger(trials) || trials < 1) return null;
  return variants * trials;
}

/**
 * A suite as the batches that run it: whole cases in each (every variant and trial of a case in
 * one batch, so a comparison of variants stays paired), each batch within the API's trials and
 * cases, as few batches as that allows, of sizes as even as can be (so they end together). A
 * body whose size cannot be read, or whose one case is over a batch, stays whole: validation
 * says what is wrong with it.
 */
export function splitByCase(body: Json): BatchPart[] {
  const perCase = trialsPerCase(body);
  const cases = Array.isArray(body.cases) ? (body.cases as unknown[]) : null;
  if (perCase === null || perCase > MAX_TRIALS_PER_BATCH || cases === null || cases.length === 0) return [{ body, firstCase: 0 }];
  const most = Math.min(MAX_CASES_PER_BATCH, Math.floor(MAX_TRIALS_PER_BATCH / perCase));
  const count = Math.ceil(cases.length / most);
  const parts: BatchPart[] = [];
  let first = 0;
  for (let part = 0; part < count; part += 1) {
    const size = Math.floor(cases.length / count) + (part < cases.length % count ? 1 : 0);
    parts.push({ body: { ...body, cases: cases.slice(first, first + size) }, firstCase: first });
    first += size;
  }
  return parts;
}
