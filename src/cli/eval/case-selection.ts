import { Problems, unplaced } from './problems';
import type { SuiteFile } from './suite-file';

type Json = Record<string, unknown>;

/** `*` any run of characters, `?` one; the rest literally; the whole id must match. */
export function globToRegExp(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

type EvalCaseLike = { id?: unknown; tags?: unknown } | null;

/** Keeps the cases `keep` accepts; none left is a problem that lists what there was. */
function keepCases(file: SuiteFile, body: Json, keep: (evalCase: EvalCaseLike) => boolean, none: (cases: EvalCaseLike[]) => string, problems: Problems) {
  if (!Array.isArray(body.cases)) return;
  const cases = body.cases as EvalCaseLike[];
  const kept = cases.flatMap((evalCase, index) => (typeof evalCase === 'object' && keep(evalCase) ? [index] : []));
  if (kept.length === 0) {
    problems.push(unplaced(`${file.shownAs}: ${none(cases)}`));
    return;
  }
  body.cases = kept.map((index) => cases[index]);
  file.keepCases(kept);
}

/** --filter: the cases whose id matches the pattern. */
export function filterCases(file: SuiteFile, body: Json, filter: string, problems: Problems): void {
  const pattern = globToRegExp(filter);
  keepCases(
    file,
    body,
    (evalCase) => typeof evalCase?.id === 'string' && pattern.test(evalCase.id),
    (cases) => `no case matches --filter "${filter}" (its cases: ${cases.map((evalCase) => String(evalCase?.id)).join(', ')})`,
    problems,
  );
}

const tagsOf = (evalCase: EvalCaseLike | null): string[] =>
  Array.isArray(evalCase?.tags) ? (evalCase.tags as unknown[]).filter((tag): tag is string => typeof tag === 'string') : [];

/** --tag (repeated): the cases that carry any of the tags. */
export function tagCases(file: SuiteFile, body: Json, tags: string[], problems: Problems): void {
  keepCases(
    file,
    body,
    (evalCase) => tagsOf(evalCase).some((tag) => tags.includes(tag)),
    (cases) => {
      const carried = [...new Set(cases.flatMap(tagsOf))];
      const given = tags.map((tag) => `--tag ${tag}`).join(', ');
      return `no case carries ${given} (${carried.length > 0 ? `its cases' tags: ${carried.join(', ')}` : 'its cases carry no tags'})`;
    },
    problems,
  );
}

/**
 * A case neither `verify` nor a validator judges would pass or fail on nothing the user chose:
 * refused before anything is sent, naming it.
 */
export function checkEveryCaseJudged(file: SuiteFile, body: Json, problems: Problems): void {
  if (!Array.isArray(body.cases)) return;
  (body.cases as unknown[]).forEach((evalCase, index) => {
    if (typeof evalCase !== 'object' || evalCase === null) return;
    const { id, verify, validator } = evalCase as Json;
    if ((verify !== undefined && verify !== null) || (validator !== undefined && validator !== null)) return;
    const name = typeof id === 'string' ? `case "${id}"` : `cases[${index}]`;
    problems.push(
      file.problem(
        ['cases', index],
        `${name} has neither verify nor a validator, so nothing would judge its trials: add verify (a command that exits 0 when the trial passed), verifyFile or a validator`,
        false,
      ),
    );
  });
}

/** Case ids are unique in a suite, across the batches it is split into. */
export function checkDistinctCaseIds(file: SuiteFile, body: Json, problems: Problems): void {
  if (!Array.isArray(body.cases)) return;
  const seen = new Set<string>();
  (body.cases as EvalCaseLike[]).forEach((evalCase, index) => {
    const id = evalCase?.id;
    if (typeof id !== 'string') return;
    if (seen.has(id)) problems.push(file.problem(['cases', index], `Two cases have the id "${id}"; case ids must be unique in a suite.`, false));
    seen.add(id);
  });
}
