import type { BatchView, RunView } from './batch-view';

type Json = Record<string, unknown>;

const NO_COSTS = { knownActualUsd: 0, allocatedUsd: 0, estimatedEquivalentUsd: 0, incomplete: false };

/**
 * The batches of one suite seen as one: what the progress view, the summary, the gate and the
 * JUnit file read. Each batch is as its last `evals.batches.get` answered; a batch not started
 * yet shows as its runs with no trial done, once a started one has shown what its variants are
 * called, so the totals are the suite's from the start.
 */
export class SuiteView {
  private readonly latest = new Map<number, BatchView>();

  constructor(
    private readonly parts: Json[],
    private readonly trials: number,
  ) {}

  update(part: number, batch: BatchView): void {
    this.latest.set(part, batch);
  }

  batch(part: number): BatchView | undefined {
    return this.latest.get(part);
  }

  /** The batches read, in the suite's order. */
  batches(): BatchView[] {
    return [...this.latest.entries()].sort(([a], [b]) => a - b).map(([, batch]) => batch);
  }

  /** Every run of the suite: those of its batches, then those of the batches not started, not yet run. */
  withPending(): BatchView {
    const read = this.asOne();
    if (read.runs.length === 0) return read;
    const pending = this.parts.flatMap((body, part) => (this.latest.has(part) ? [] : pendingRuns(body, read.runs, this.trials)));
    return { ...read, runs: [...read.runs, ...pending] };
  }

  /** The batches read as one batch: its runs all of theirs; failed when one failed, running while one runs. */
  asOne(): BatchView {
    const batches = this.batches();
    const failed = batches.find((batch) => batch.status === 'failed');
    const running = batches.some((batch) => batch.status === 'running');
    return {
      id: batches.map((batch) => batch.id).join(', '),
      status: failed ? 'failed' : running ? 'running' : 'finished',
      failure: failed?.failure ?? null,
      local: batches.some((batch) => batch.local),
      runs: batches.flatMap((batch) => batch.runs),
    };
  }
}

/** A value as JSON with its keys sorted, so two equal definitions compare equal whatever their key order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Json).filter(([, member]) => member !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, member]) => `${JSON.stringify(key)}:${canonical(member)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Whether a run's variant is the definition a start body gave (harness, model, profile). */
export function isVariant(view: RunView['variant'], definition: Json): boolean {
  return view.harness === definition.harness && view.model === definition.model && canonical(view.profile ?? null) === canonical(definition.profile ?? null);
}

/** A variant of a body as a run names it: that of a run read, or one made of the definition. */
function variantView(definition: Json, runs: RunView[]): RunView['variant'] {
  const read = runs.find((run) => isVariant(run.variant, definition))?.variant;
  if (read) return read;
  const { harness, model, profile, sandbox } = definition as { harness: string; model: string; profile?: RunView['variant']['profile']; sandbox?: string };
  return { id: '', harness, model, profile: profile ?? null, sandbox: sandbox ?? null, userModel: null };
}

function pendingRuns(body: Json, runs: RunView[], trials: number): RunView[] {
  const cases = (body.cases ?? []) as Array<{ id: string }>;
  const variants = ((body.variants ?? []) as Json[]).map((definition) => variantView(definition, runs));
  const perRun = typeof body.trials === 'number' ? body.trials : trials;
  return cases.flatMap((evalCase) =>
    variants.map((variant) => ({
      id: '',
      case: { id: evalCase.id, name: evalCase.id },
      variant,
      status: 'running' as const,
      failure: null,
      distribution: { trials: perRun, passed: 0, failed: 0, voided: 0, scored: 0, commandMedian: null },
      costs: NO_COSTS,
      trials: [],
    })),
  );
}
