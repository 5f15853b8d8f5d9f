import type { ReadStore } from '#infrastructure/read-store/read-store.port';
import { NotFound } from '#shared/errors';
import { CASES, caseDocumentId } from '../evals/cases/case.projection';
import { SUITES, suiteDocumentId } from '../evals/suites/suite.projection';

/** A suite or case the organization never defined is a 404, as for any id that names nothing. */
export async function knownScope(store: ReadStore, organization: string, filter: { suiteId: string | null; caseId?: string | null }): Promise<void> {
  if (filter.suiteId != null && !(await store.collection(SUITES).findOne({ _id: suiteDocumentId(organization, filter.suiteId), organization }))) {
    throw new NotFound(`Suite "${filter.suiteId}" does not exist.`);
  }
  if (filter.caseId != null && !(await store.collection(CASES).findOne({ _id: caseDocumentId(organization, filter.caseId), organization }))) {
    throw new NotFound(`Case "${filter.caseId}" does not exist.`);
  }
}
