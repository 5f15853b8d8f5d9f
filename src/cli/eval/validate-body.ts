import 'reflect-metadata';
import { DecodeError, DecodePipe } from '#infrastructure/http/decode/decode.pipe';
import { StartBatchDto } from '#modules/evals/batches/start-batch.dto';
import { toPlan } from '#modules/evals/batches/to-plan';
import { checkBatchPlan } from '#modules/evals/batches/start-rules';
import { DomainError } from '#shared/errors';
import { unknownKeyMessage } from './key-suggestions';
import type { Problems } from './problems';
import type { IssuePath, SuiteFile } from './suite-file';

type Json = Record<string, unknown>;

/**
 * Checks a start body with the server's own decoder and rules, so the file is refused here
 * with the same bounds and words the server would use, before anything is sent. The decoder
 * is the pipe the server runs on every body; nothing of Nest is started to use it. A body of a
 * split suite holds the cases from `firstCase` on: its `cases[0]` is the file's `cases[firstCase]`.
 */
export function validateStartBody(suite: SuiteFile, body: Json, problems: Problems, firstCase = 0): void {
  const inSuite = (at: IssuePath): IssuePath => (at[0] === 'cases' && typeof at[1] === 'number' ? ['cases', at[1] + firstCase, ...at.slice(2)] : at);
  let decoded: StartBatchDto;
  try {
    decoded = new DecodePipe().transform(body, { type: 'body', metatype: StartBatchDto }) as StartBatchDto;
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    for (const issue of error.issues) {
      // The decoder's words for a key it does not know ("property trails should not exist") become the user's.
      const message = issue._tag === 'Unexpected' && /should not exist$/.test(issue.message) ? unknownKeyMessage(body, issue.path) : issue.message;
      problems.push(suite.problem(inSuite(issue.path), message));
    }
    return;
  }
  const plan = toPlan(decoded);
  // The server refuses `local` to evals.batches.start; here it names where a trial runs, nothing more.
  for (const variant of plan.variants) if (variant.sandbox === 'local') variant.sandbox = null;
  try {
    checkBatchPlan(plan);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    // Two cases of one id are found over the whole suite, across its batches (checkDistinctCaseIds).
    if (error.message.startsWith('Two cases have the id')) return;
    problems.push(suite.problem(inSuite(whereRuleBroke(error.message, body)), error.message, false));
  }
}

/** The rules' messages name a variant by index or a case by id: point at it in the file. */
function whereRuleBroke(message: string, body: Json): IssuePath {
  const variant = /variants\[(\d+)\]/.exec(message);
  if (variant) return ['variants', Number(variant[1])];
  const caseId = /case "([^"]+)"|cases have the id "([^"]+)"/.exec(message);
  const id = caseId?.[1] ?? caseId?.[2];
  const cases = Array.isArray(body.cases) ? (body.cases as Array<{ id?: unknown }>) : [];
  const index = id === undefined ? -1 : cases.findIndex((evalCase) => evalCase.id === id);
  return index >= 0 ? ['cases', index] : [];
}
