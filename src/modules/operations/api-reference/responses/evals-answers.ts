import { anyObject, boolean, integer, list, object, objectWith, oneOf, OperationAnswer, orNull, ref, text, time } from './schema-builders';

const batchSummary = object({
  id: text,
  status: oneOf('running', 'finished', 'failed'),
  startedAt: time,
  finishedAt: orNull(time),
  failure: orNull(text),
  cases: integer,
  runs: integer,
  scored: integer,
  passed: integer,
  voided: integer,
  trigger: ref('Trigger'),
  suite: object({ id: text, name: text }),
});

const tally = object({ passed: integer, scored: integer });
const suiteSummary = object({ id: text, name: text, lastRunAt: orNull(time), cases: integer, variants: integer, tally });
const caseVariant = object({
  variant: anyObject,
  runs: integer,
  status: orNull(text),
  lastRunAt: orNull(time),
  lastRunId: orNull(text),
  distribution: orNull(ref('Distribution')),
});

/** The answers of the `evals.*` operations (the reference's "Evals" section). */
export const EVALS_ANSWERS: Record<string, OperationAnswer> = {
  'evals.batches.start': {
    summary: 'Start a batch: one run per case and variant, trials in the background',
    answer: ref('StartedBatch'),
    errors: [400, 403, 409],
  },
  'evals.batches.get': {
    summary: 'A batch with its runs and their trials',
    answer: object({
      id: text,
      status: oneOf('running', 'finished', 'failed'),
      startedAt: time,
      finishedAt: orNull(time),
      failure: orNull(text),
      local: boolean,
      costs: ref('CostRecord'),
      runs: list(ref('Run')),
      trigger: ref('Trigger'),
    }),
    errors: [400, 403, 404],
  },
  'evals.batches.list': {
    summary: "The organization's batches (or one suite's), newest first",
    answer: object({ batches: list(batchSummary), next: orNull(ref('Cursor')), total: integer }),
    errors: [400, 403],
  },
  'evals.cases.run': { summary: 'Start a batch for one stored case', answer: ref('StartedBatch'), errors: [400, 403, 404, 409] },
  'evals.cases.get': {
    summary: 'A case with its newest set-up, its variants and its versions',
    answer: object({
      id: text,
      name: text,
      setup: anyObject,
      suite: object({ id: text, name: text }),
      tags: list(text),
      variants: list(caseVariant),
      versions: list(object({ author: text, changes: list(text), createdAt: time, definitionHash: text })),
    }),
    errors: [400, 403, 404],
  },
  'evals.cases.list': {
    summary: "The organization's cases by name, filtered",
    answer: object({
      cases: list(
        object({ id: text, name: text, lastRunAt: orNull(time), suite: object({ id: text, name: text }), tags: list(text), variants: list(caseVariant) }),
      ),
      next: orNull(ref('Cursor')),
      suites: list(object({ id: text, name: text })),
      tags: list(text),
    }),
    errors: [400, 403],
  },
  'evals.runs.get': { summary: 'One run with its trials', answer: ref('Run'), errors: [400, 403, 404] },
  'evals.trials.modelCalls': {
    summary: "A trial's calls through the model gateway, with their request and answer bodies when the server records them",
    answer: object({ calls: list(anyObject) }),
    errors: [400, 403, 404],
  },
  'evals.trials.diff': {
    summary: "The agent's change to its workspace: the files it added, modified or deleted, and a unified diff of the text ones",
    answer: object({
      files: list(
        object({
          path: text,
          change: oneOf('added', 'modified', 'deleted'),
          bytesBefore: orNull(integer),
          bytesAfter: orNull(integer),
          binary: boolean,
          diffed: boolean,
        }),
      ),
      patch: text,
      truncated: boolean,
      recorded: boolean,
    }),
    errors: [400, 403, 404],
  },
  'evals.trials.artifact': {
    summary: "One of a trial's artifacts: a text file's content, or a binary one's in base64 (at most 4 MiB)",
    answer: object({ path: text, byteSize: integer, sha256: text, encoding: oneOf('utf8', 'base64'), content: text }),
    errors: [400, 403, 404],
  },
  'evals.runs.list': {
    summary: "A case's runs, newest first, 20 a page",
    answer: object({ runs: list(ref('Run')), page: integer, pageSize: integer, total: integer }),
    errors: [400, 403, 404],
  },
  'evals.suites.get': {
    summary: 'A suite with its recorded set-up and its tags',
    answer: objectWith(
      { id: text, name: text, lastRunAt: orNull(time), cases: integer, variants: integer, tally, tags: list(text) },
      { setup: orNull(object({ prompt: text, source: orNull(anyObject) })) },
    ),
    errors: [400, 403, 404],
  },
  'evals.suites.list': {
    summary: "The organization's suites, most recently run first",
    answer: object({ suites: list(suiteSummary), next: orNull(ref('Cursor')) }),
    errors: [400, 403],
  },
  'evals.models.list': {
    summary: 'The models a variant of a harness can name',
    answer: object({
      harness: text,
      models: list(object({ id: text, displayName: text, vendor: text, summary: orNull(text) })),
      total: integer,
      agent: orNull(object({ name: text, version: text, pinnedVersion: text, package: text, provider: orNull(text) })),
    }),
    errors: [400, 403],
  },
};

/** The answers of the local runner's operations. */
export const RUNNER_ANSWERS: Record<string, OperationAnswer> = {
  'runner.batches.start': { summary: 'Start a batch whose local variants the caller runs', answer: ref('StartedBatch'), errors: [400, 403, 409] },
  'runner.trials.lease': {
    summary: "Lease queued trials of the batch's local runs",
    answer: object({
      trials: list(
        object({
          id: text,
          runId: text,
          caseId: text,
          variantId: text,
          ordinal: integer,
          lease: object({ id: text, expiresAt: time }),
          spec: anyObject,
        }),
      ),
      remaining: integer,
      outputCapBytes: integer,
    }),
    errors: [400, 403, 404, 409],
  },
  'runner.trials.report': {
    summary: "Record a leased trial's outcome",
    answer: object({ id: text, status: oneOf('passed', 'failed', 'void') }),
    errors: [400, 403, 404, 409],
  },
  'runner.beat': {
    summary: 'Say the runner is alive and extend its leases',
    answer: object({ expiresAt: time, leases: list(object({ trialId: text, id: text, expiresAt: time })) }),
    errors: [400, 403, 404, 409],
  },
  'runner.batches.finish': {
    summary: 'End a local batch: unreported trials are void',
    answer: object({ id: text, cancelled: boolean, voided: integer }),
    errors: [400, 403, 404, 409],
  },
};
