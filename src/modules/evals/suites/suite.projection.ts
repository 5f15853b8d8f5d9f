import type { BatchStarted } from '../batches/batch.events';
import type { EvalSource } from '#shared/eval-definitions';
import { typedDocumentProjection } from '../../typed-projection';
import type { SuiteDefined } from './suite.events';

export const SUITES = 'eval_suites';

export type SuiteDocument = {
  _id: string;
  organization: string;
  suiteId: string;
  name: string;
  sortName: string;
  lastRunAt: string | null;
  /** 0 before the first run, so that the cursor always has a number. */
  lastRunAtMillis: number;
  lastBatchId: string | null;
  /** The prompt and workspace of the newest recorded definition (`SuiteDefined`), if any. */
  definition: { prompt: string; source: EvalSource | null; definedAtMillis: number } | null;
};

export const suiteDocumentId = (organization: string, suiteId: string) => `${organization}.${suiteId}`;

function blankSuite(organization: string, suiteId: string, name: string): SuiteDocument {
  return {
    _id: suiteDocumentId(organization, suiteId),
    organization,
    suiteId,
    name,
    sortName: name.toLowerCase(),
    lastRunAt: null,
    lastRunAtMillis: 0,
    lastBatchId: null,
    definition: null,
  };
}

function defined(current: SuiteDocument | null, data: SuiteDefined['data']): SuiteDocument {
  const { suite } = data;
  const document = current ?? blankSuite(data.organization, suite.id, suite.name);
  const definition = { prompt: suite.prompt, source: suite.source, definedAtMillis: Date.parse(data.definedAt) };
  // Before its first run the definition names the suite; afterwards the newest run does.
  const name = document.lastBatchId === null ? suite.name : document.name;
  return { ...document, name, sortName: name.toLowerCase(), definition };
}

function ran(current: SuiteDocument | null, data: BatchStarted['data']): SuiteDocument {
  const { suite } = data;
  const document = current ?? blankSuite(data.organization, suite.id, suite.name);
  const millis = Date.parse(data.startedAt);
  const newest = millis > document.lastRunAtMillis || (millis === document.lastRunAtMillis && data.batchId > (document.lastBatchId ?? ''));
  if (!newest) return document;
  return { ...document, name: suite.name, sortName: suite.name.toLowerCase(), lastRunAt: data.startedAt, lastRunAtMillis: millis, lastBatchId: data.batchId };
}

/** One document per suite: its name, when it last ran, and its recorded definition. */
export const suiteProjection = typedDocumentProjection<SuiteDefined | BatchStarted, SuiteDocument>({
  name: 'eval-suites',
  collection: SUITES,
  indexes: [{ keys: { organization: 1, lastRunAtMillis: -1, suiteId: -1 } }, { keys: { organization: 1, sortName: 1, suiteId: 1 } }],
  eventTypes: ['SuiteDefined', 'BatchStarted'],
  documentId: (event) => suiteDocumentId(event.data.organization, event.data.suite.id),
  evolve(document, event) {
    if (event.type === 'SuiteDefined') return defined(document, event.data);
    return ran(document, event.data);
  },
});
