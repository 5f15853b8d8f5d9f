import { loadFileReferences } from './file-references';
import { InvalidSuiteFile, SuiteFile } from './suite-file';
import { validateStartBody } from './validate-body';

type Json = Record<string, unknown>;

/** A suite file made ready to start: the body of `evals.batches.start` and what only the CLI uses. */
export interface PreparedSuite {
  file: SuiteFile;
  name: string;
  body: Json;
  /** Names of the user's variables given to local trials; never sent. */
  env: string[];
  local: boolean;
  trials: number;
}

export interface SuiteChoices {
  trials?: number;
  filter?: string;
  local: boolean;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `*` any run of characters, `?` one; the rest literally; the whole id must match. */
export function globToRegExp(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

/**
 * Reads a suite file, loads what it names by path, applies --trials, --filter and --local, and
 * validates the body as the server would. Throws InvalidSuiteFile with every problem found.
 */
export function prepareSuite(path: string, choices: SuiteChoices): PreparedSuite {
  const file = SuiteFile.read(path);
  const content = file.content();
  if (typeof content !== 'object' || content === null || Array.isArray(content)) {
    throw new InvalidSuiteFile([file.problem([], 'a suite file holds a mapping: suite, cases, variants, trials (and optional name, env)')]);
  }
  const { name, env, ...body } = content as Json;
  const problems: string[] = [];
  const envNames = readEnvNames(file, env, problems);
  if (name !== undefined && (typeof name !== 'string' || name.length < 1 || name.length > 200)) {
    problems.push(file.problem(['name'], 'must be a string of 1 to 200 characters'));
  }
  loadFileReferences(file, body, problems);
  if (choices.trials !== undefined) body.trials = choices.trials;
  if (choices.filter !== undefined) filterCases(file, body, choices.filter, problems);
  const local = chooseLocal(file, body, choices.local, problems);
  if (local) body.checksIn = true;
  if (problems.length === 0) validateStartBody(file, body, problems);
  if (problems.length > 0) throw new InvalidSuiteFile(problems);
  const suiteId = (body.suite as { id: string }).id;
  return { file, name: typeof name === 'string' ? name : suiteId, body, env: envNames, local, trials: body.trials as number };
}

function readEnvNames(file: SuiteFile, env: unknown, problems: string[]): string[] {
  if (env === undefined) return [];
  if (!Array.isArray(env) || !env.every((name) => typeof name === 'string' && ENV_NAME.test(name))) {
    problems.push(file.problem(['env'], 'must be a list of environment variable names (letters, digits and "_", not starting with a digit)'));
    return [];
  }
  return [...new Set(env as string[])];
}

function filterCases(file: SuiteFile, body: Json, filter: string, problems: string[]): void {
  if (!Array.isArray(body.cases)) return;
  const pattern = globToRegExp(filter);
  const cases = body.cases as Array<{ id?: unknown }>;
  const kept = cases.flatMap((evalCase, index) => (typeof evalCase.id === 'string' && pattern.test(evalCase.id) ? [index] : []));
  if (kept.length === 0) {
    const ids = cases.map((evalCase) => String(evalCase.id)).join(', ');
    problems.push(`${file.shownAs}: no case matches --filter "${filter}" (its cases: ${ids})`);
    return;
  }
  body.cases = kept.map((index) => cases[index]);
  file.keepCases(kept);
}

/**
 * Local when --local (every variant then runs here) or when the file's variants say
 * `sandbox: local`. A file mixing local and server variants is refused: one file is one batch,
 * and a batch runs either on the server or here.
 */
function chooseLocal(file: SuiteFile, body: Json, everything: boolean, problems: string[]): boolean {
  const variants = Array.isArray(body.variants) ? (body.variants as unknown[]) : [];
  const isLocal = (variant: unknown) => (variant as { sandbox?: unknown } | null)?.sandbox === 'local';
  if (everything) {
    for (const variant of variants) if (typeof variant === 'object' && variant !== null) (variant as Json).sandbox = 'local';
    return true;
  }
  const local = variants.filter(isLocal).length;
  if (local > 0 && local < variants.length) {
    const first = variants.findIndex((variant) => !isLocal(variant));
    problems.push(
      file.problem(
        ['variants', first],
        'this file mixes local and server variants; put the local ones in a file of their own, or run all of them here with --local',
        false,
      ),
    );
  }
  return local > 0;
}
