import { ApiRefusal, AssayApi } from './api-client';
import { EXIT } from './exit-codes';
import { StartRefused } from './start-batch';

/** Cases read at once while looking up their suites. */
const LOOKUPS_AT_ONCE = 8;

/** A case of the suite that the organization already has in another suite. */
export interface MovedCase {
  caseId: string;
  from: string;
}

/**
 * The suite's cases that belong to another suite of the organization (a case id is the
 * organization's: starting this suite moves them into it, and empties them from the other).
 */
export async function casesOfOtherSuites(api: AssayApi, suiteId: string, caseIds: string[]): Promise<MovedCase[]> {
  const moved: MovedCase[] = [];
  let next = 0;
  const worker = async () => {
    while (next < caseIds.length) {
      const caseId = caseIds[next];
      next += 1;
      const answer = await api.call('evals.cases.get', { id: caseId });
      if (answer.status === 404) continue;
      if (answer.status !== 200) throw refusalOf(new ApiRefusal('evals.cases.get', answer.status, answer.body));
      const from = (answer.body as { suite?: { id?: string } }).suite?.id;
      if (from !== undefined && from !== suiteId) moved.push({ caseId, from });
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUPS_AT_ONCE, caseIds.length) }, worker));
  return moved.sort((a, b) => caseIds.indexOf(a.caseId) - caseIds.indexOf(b.caseId));
}

function refusalOf(error: ApiRefusal): StartRefused {
  const message = (error.body as { message?: string } | null)?.message ?? error.message;
  if (error.status === 401) return new StartRefused(EXIT.usage, `The server refused the API key: ${message} Pass a valid key with --key or ASSAY_API_KEY.`);
  if (error.status === 403) return new StartRefused(EXIT.usage, `${message} Use a key with evals:write and evals:read.`);
  return new StartRefused(EXIT.failed, `Could not look up the suite's cases: ${error.message}`);
}

/** The warning for a case a start moves, or the refusal under --no-move. */
export function movedCaseLine(moved: MovedCase, suiteId: string, noMove: boolean): string {
  return noMove
    ? `case ${moved.caseId} belongs to suite ${moved.from}; --no-move refuses to move it to ${suiteId}: give the case another id, or leave out --no-move to move it`
    : `case ${moved.caseId} belongs to suite ${moved.from}: this batch moves it to ${suiteId}`;
}
