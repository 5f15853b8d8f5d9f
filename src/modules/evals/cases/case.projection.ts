import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { evolveGuarded, GUARDED_ATTEMPTS, writeGuarded } from '#infrastructure/processing/projection';
import { Recorded, typedProjection } from '../../typed-projection';
import type { BatchStarted, PlannedRun, RunSetup } from '../batches/batch.events';
import type { RunDocument } from '../runs/run.projection';
import type { EvalCase, VariantDefinition } from '#shared/eval-definitions';
import { variantIdentity } from '../shared/identity';
import { computeDistribution, Distribution } from '../trials/distribution';
import { CASE_RUNS, CaseRunDocument, recordPlannedRuns, recordProgress, RUN_PROGRESS_TYPES, RunProgress } from './case-runs';
import type { CaseEvent, CaseVariantDefined, CaseVersionAppended } from './case.events';

export const CASES = 'eval_cases';
export const CASE_TAGS = 'eval_case_tags';

export type VariantView = RunDocument['variant'];

/** A variant of a case with its number of runs and the state of its newest run. */
export interface VariantSummaryDocument {
  variant: VariantView;
  /** What makes two variants of different cases the same combination (a suite's `variants`). */
  identity: string;
  runs: number;
  status: RunDocument['status'] | null;
  lastRunAt: string | null;
  lastRunAtMillis: number;
  lastRunId: string | null;
  distribution: Distribution | null;
}

export interface CaseVersion {
  author: string;
  changes: string[];
  createdAt: string;
  definitionHash: string;
}

export type CaseDocument = {
  _id: string;
  organization: string;
  caseId: string;
  name: string;
  /** The lower-cased name: the list's order. */
  sortName: string;
  /** Lower-cased id and name, for the `q` filter. */
  search: string;
  suite: { id: string; name: string };
  tags: string[];
  /** What the case's newest run used; null until it first runs. */
  setup: RunSetup | null;
  /** The newest batch that ran the case: name, tags, suite and setup come from it. */
  lastBatch: { startedAtMillis: number; batchId: string } | null;
  lastRunAt: string | null;
  /** 0 before the first run, so that the cursor always has a number. */
  lastRunAtMillis: number;
  /** Oldest first, as appended. */
  versions: CaseVersion[];
  variants: VariantSummaryDocument[];
};

/** Per organization: every tag its cases carry, with how many carry it. */
export type CaseTagsDocument = { _id: string; organization: string; tags: Array<{ tag: string; cases: number }> };

export const caseDocumentId = (organization: string, caseId: string) => `${organization}.${caseId}`;

const newer = (millis: number, id: string, than: { millis: number; id: string | null }) =>
  millis > than.millis || (millis === than.millis && id > (than.id ?? ''));

function named(document: CaseDocument, name: string, tags: string[]): CaseDocument {
  const lower = name.toLowerCase();
  return { ...document, name, sortName: lower, search: `${document.caseId}\n${lower}`, tags: [...new Set(tags)] };
}

function blankCase(organization: string, definition: EvalCase, suiteId: string): CaseDocument {
  const blank: CaseDocument = {
    _id: caseDocumentId(organization, definition.id),
    organization,
    caseId: definition.id,
    name: '',
    sortName: '',
    search: '',
    suite: { id: suiteId, name: suiteId },
    tags: [],
    setup: null,
    lastBatch: null,
    lastRunAt: null,
    lastRunAtMillis: 0,
    versions: [],
    variants: [],
  };
  return named(blank, definition.name, definition.tags);
}

function versionAppended(current: CaseDocument | null, data: CaseVersionAppended['data']): CaseDocument {
  let document = current ?? blankCase(data.organization, data.definition, data.suiteId);
  const { author, changes, createdAt, definitionHash } = data;
  document = { ...document, versions: [...document.versions, { author, changes, createdAt, definitionHash }] };
  if (document.lastBatch) return document;
  // Until the case first runs, its newest version names it.
  const suite = document.suite.id === data.suiteId ? document.suite : { id: data.suiteId, name: data.suiteId };
  return { ...named(document, data.definition.name, data.definition.tags), suite };
}

function variantView(variantId: string, variant: VariantDefinition, userModel: string | null): VariantView {
  return { id: variantId, harness: variant.harness, model: variant.model, profile: variant.profile, sandbox: variant.sandbox, userModel };
}

function blankVariant(variantId: string, variant: VariantDefinition, userModel: string | null): VariantSummaryDocument {
  return {
    variant: variantView(variantId, variant, userModel),
    identity: variantIdentity(variant, userModel),
    runs: 0,
    status: null,
    lastRunAt: null,
    lastRunAtMillis: 0,
    lastRunId: null,
    distribution: null,
  };
}

function variantDefined(document: CaseDocument | null, data: CaseVariantDefined['data']): CaseDocument | null {
  if (!document) return null;
  const fresh = blankVariant(data.variantId, data.variant, data.userModel);
  const known = document.variants.some((entry) => entry.variant.id === data.variantId);
  const variants = known
    ? document.variants.map((entry) => (entry.variant.id === data.variantId ? { ...entry, variant: fresh.variant, identity: fresh.identity } : entry))
    : [...document.variants, fresh];
  return { ...document, variants };
}

function runStarted(variants: VariantSummaryDocument[], run: PlannedRun, startedAt: string): VariantSummaryDocument[] {
  const millis = Date.parse(startedAt);
  const known = variants.some((entry) => entry.variant.id === run.variantId);
  const all = known ? variants : [...variants, blankVariant(run.variantId, run.variant, run.userModel)];
  return all.map((entry) => {
    if (entry.variant.id !== run.variantId) return entry;
    const counted = { ...entry, runs: entry.runs + 1 };
    if (!newer(millis, run.runId, { millis: entry.lastRunAtMillis, id: entry.lastRunId })) return counted;
    const queued = run.trialIds.map(() => ({ status: 'queued', commands: 0 }));
    return { ...counted, status: 'running', lastRunAt: startedAt, lastRunAtMillis: millis, lastRunId: run.runId, distribution: computeDistribution(queued) };
  });
}

function batchStarted(current: CaseDocument | null, data: BatchStarted['data'], definition: EvalCase): CaseDocument {
  let document = current ?? blankCase(data.organization, definition, data.suite.id);
  const runs = data.runs.filter((run) => run.caseId === definition.id);
  const variants = runs.reduce((all, run) => runStarted(all, run, data.startedAt), document.variants);
  const millis = Date.parse(data.startedAt);
  document = { ...document, variants };
  if (!newer(millis, data.batchId, { millis: document.lastBatch?.startedAtMillis ?? 0, id: document.lastBatch?.batchId ?? null })) return document;
  return {
    ...named(document, definition.name, definition.tags),
    suite: { id: data.suite.id, name: data.suite.name },
    setup: runs[0]?.setup ?? document.setup,
    lastBatch: { startedAtMillis: millis, batchId: data.batchId },
    lastRunAt: data.startedAt,
    lastRunAtMillis: millis,
  };
}

/** A verdict or a finish changed a run: its variant shows it when it is the newest run. Null: no change. */
function runChanged(document: CaseDocument | null, run: CaseRunDocument): CaseDocument | null {
  const entry = document?.variants.find((variant) => variant.lastRunId === run._id);
  if (!document || !entry) return null;
  if (entry.status === run.status && JSON.stringify(entry.distribution) === JSON.stringify(run.distribution)) return null;
  const variants = document.variants.map((variant) => (variant === entry ? { ...variant, status: run.status, distribution: run.distribution } : variant));
  return { ...document, variants };
}

/** A case's document before and after the event; `read`: the `_position` it was read at (undefined: absent). */
type Change = { previous: CaseDocument | null; next: CaseDocument; read: number | undefined };

type StoredCase = CaseDocument & { _position: number };

type CaseProjectionEvent = CaseEvent | BatchStarted | RunProgress;

/**
 * The cases read model, with every case's variant summaries kept current as verdicts arrive,
 * and the organization's tag list. It folds the runs' progress itself (case-runs.ts), so it
 * reads no other projection's documents and may be registered in any order.
 */
export const caseProjection = typedProjection<CaseProjectionEvent>({
  name: 'eval-cases',
  eventTypes: ['CaseVersionAppended', 'CaseVariantDefined', 'BatchStarted', ...RUN_PROGRESS_TYPES],
  collections: {
    [CASES]: [
      { keys: { organization: 1, sortName: 1, caseId: 1 } },
      { keys: { organization: 1, 'suite.id': 1, sortName: 1, caseId: 1 } },
      { keys: { organization: 1, tags: 1, sortName: 1, caseId: 1 } },
      { keys: { organization: 1, search: 1 } },
    ],
    // Read by `_id` (the organization) only.
    [CASE_TAGS]: [],
    // Read by `_id` (the run) only.
    [CASE_RUNS]: [],
  },
  async project(event, store) {
    // Each write names the position it read, so a lapsed owner's late write cannot undo a newer
    // document; when one changed in between, the event is applied again to what is there now.
    for (let attempt = 0; attempt < GUARDED_ATTEMPTS; attempt++) {
      const changes = await changesOf(event, store);
      if (changes.length === 0) return;
      await recordTags(store, changes, event.position);
      if (await writeCases(store, changes, event.position)) return;
    }
    throw new Error(`Projection eval-cases: the cases of event ${event.position} kept changing under it; another projector is writing them.`);
  },
});

/** False when a case changed since it was read (the others written are then skipped on the retry). */
async function writeCases(store: ReadStore, changes: Change[], position: number): Promise<boolean> {
  const cases = store.collection<StoredCase>(CASES);
  let all = true;
  for (const { next, read } of changes) all = (await writeGuarded(cases, next._id, read, { ...next, _position: position })) && all;
  return all;
}

function withoutPosition(stored: StoredCase): CaseDocument {
  const { _position: _ignored, ...document } = stored;
  return document;
}

/** The documents an event changes, skipping those that already reflect it (a redelivery). */
async function changesOf(event: Recorded<CaseProjectionEvent>, store: ReadStore): Promise<Change[]> {
  const cases = store.collection<StoredCase>(CASES);
  const change = async (id: string, evolve: (current: CaseDocument | null) => CaseDocument | null): Promise<Change[]> => {
    const stored = await cases.findOne({ _id: id });
    if (stored && stored._position >= event.position) return [];
    const previous = stored ? withoutPosition(stored) : null;
    const next = evolve(previous);
    return next ? [{ previous, next, read: stored?._position }] : [];
  };
  const runs = store.collection<CaseRunDocument>(CASE_RUNS);
  switch (event.type) {
    case 'CaseVersionAppended': {
      const { data } = event;
      return change(caseDocumentId(data.organization, data.caseId), (current) => versionAppended(current, data));
    }
    case 'CaseVariantDefined': {
      const { data } = event;
      return change(caseDocumentId(data.organization, data.caseId), (current) => variantDefined(current, data));
    }
    case 'BatchStarted': {
      const { data } = event;
      // Written before the cases, like the tags, so a redelivery mends a crash between the two.
      await recordPlannedRuns(runs, data.organization, data.runs, event.position);
      const all = await Promise.all(
        data.cases.map((definition) => change(caseDocumentId(data.organization, definition.id), (current) => batchStarted(current, data, definition))),
      );
      return all.flat();
    }
    default: {
      const run = await recordProgress(runs, event);
      // A start or a command changes no verdict: the case shows a run's progress at its verdicts and its finish.
      if (!run || event.type === 'TrialStarted' || event.type === 'TrialCommandRecorded') return [];
      return change(caseDocumentId(run.organization, run.caseId), (current) => runChanged(current, run));
    }
  }
}

/** Moves the organization's tag counts by what the changes did to their cases' tags. */
async function recordTags(store: ReadStore, changes: Change[], position: number): Promise<void> {
  const delta = new Map<string, number>();
  for (const { previous, next } of changes) {
    for (const tag of previous?.tags ?? []) delta.set(tag, (delta.get(tag) ?? 0) - 1);
    for (const tag of next.tags) delta.set(tag, (delta.get(tag) ?? 0) + 1);
  }
  if ([...delta.values()].every((count) => count === 0)) return;
  const organization = changes[0].next.organization;
  const collection = store.collection<CaseTagsDocument & { _position: number }>(CASE_TAGS);
  // Written before the cases, so a crash between the two is mended by the redelivery.
  await evolveGuarded(collection, organization, (stored) => {
    if (stored && stored._position >= position) return undefined;
    const counts = new Map((stored?.tags ?? []).map(({ tag, cases }) => [tag, cases]));
    for (const [tag, count] of delta) counts.set(tag, (counts.get(tag) ?? 0) + count);
    const tags = [...counts]
      .filter(([, cases]) => cases > 0)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([tag, cases]) => ({ tag, cases }));
    return { _id: organization, organization, tags, _position: position };
  });
}
