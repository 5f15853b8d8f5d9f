import { MAX_TRIALS_PER_BATCH } from '#modules/evals/batches/start-rules';
import { loadCasesFile } from './cases-file';
import { checkDistinctCaseIds, checkEveryCaseJudged, filterCases, tagCases } from './case-selection';
import { loadFileReferences } from './file-references';
import { Problems } from './problems';
import { BatchPart, splitByCase, trialsPerCase } from './split-suite';
import { InvalidSuiteFile, SuiteFile } from './suite-file';
import { validateStartBody } from './validate-body';

export { globToRegExp } from './case-selection';

type Json = Record<string, unknown>;

/** A suite file made ready to start: the body of `evals.batches.start`, the batches it splits into, and what only the CLI uses. */
export interface PreparedSuite {
  file: SuiteFile;
  name: string;
  suiteId: string;
  /** Every case the suite runs (after --filter and --tag). */
  body: Json;
  /** The batches that run it, by case (one when it fits in one). */
  parts: BatchPart[];
  /** Names of the user's variables given to local trials; never sent. */
  env: string[];
  local: boolean;
  trials: number;
}

export interface SuiteChoices {
  trials?: number;
  filter?: string;
  tags?: string[];
  local: boolean;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Reads a suite file, loads what it names by path (cases from a casesFile too), applies
 * --trials, --filter, --tag and --local, splits it into batches by case and validates each as
 * the server would. Throws InvalidSuiteFile with every problem found, in file order.
 */
export function prepareSuite(path: string, choices: SuiteChoices): PreparedSuite {
  const file = SuiteFile.read(path);
  const content = file.content();
  if (typeof content !== 'object' || content === null || Array.isArray(content)) {
    throw new InvalidSuiteFile([file.problem([], 'a suite file holds a mapping: suite, cases, variants, trials (and optional name, env)').text]);
  }
  const { name, env, ...body } = content as Json;
  const problems = new Problems();
  const envNames = readEnvNames(file, env, problems);
  if (name !== undefined && (typeof name !== 'string' || name.length < 1 || name.length > 200)) {
    problems.push(file.problem(['name'], 'must be a string of 1 to 200 characters'));
  }
  // The file's name names the suite wherever it is shown (the batches list), unless the suite names itself.
  const suite = body.suite as Json | undefined;
  if (typeof name === 'string' && isMapping(suite) && suite.name === undefined) suite.name = name;
  loadCasesFile(file, body, problems);
  loadFileReferences(file, body, problems);
  if (choices.trials !== undefined) body.trials = choices.trials;
  if (choices.filter !== undefined) filterCases(file, body, choices.filter, problems);
  if (choices.tags && choices.tags.length > 0) tagCases(file, body, choices.tags, problems);
  const local = chooseLocal(file, body, choices.local, problems);
  if (local) body.checksIn = true;
  const parts = problems.length === 0 ? validateParts(file, body, problems) : [];
  if (problems.length > 0) throw new InvalidSuiteFile(problems.inFileOrder());
  const suiteId = (body.suite as { id: string }).id;
  return { file, name: typeof name === 'string' ? name : suiteId, suiteId, body, parts, env: envNames, local, trials: body.trials as number };
}

/** The batches of the suite, each checked with the server's decoder and rules. */
function validateParts(file: SuiteFile, body: Json, problems: Problems): BatchPart[] {
  checkEveryCaseJudged(file, body, problems);
  checkDistinctCaseIds(file, body, problems);
  const perCase = trialsPerCase(body);
  const variants = Array.isArray(body.variants) ? body.variants.length : 0;
  // A case's variants and trials stay in one batch, so one case over a batch cannot run (out of
  // their own bounds, variants and trials are the decoder's to name).
  if (perCase !== null && perCase > MAX_TRIALS_PER_BATCH && variants <= 20 && (body.trials as number) <= 10) {
    problems.push(
      file.problem(
        ['trials'],
        `each case runs ${variants} variants × ${String(body.trials)} trials = ${perCase} trials, more than a batch holds (${MAX_TRIALS_PER_BATCH}); a suite is split into batches by case, so give fewer variants or trials`,
        false,
      ),
    );
    return [];
  }
  const parts = splitByCase(body);
  for (const part of parts) validateStartBody(file, part.body, problems, part.firstCase);
  return parts;
}

function readEnvNames(file: SuiteFile, env: unknown, problems: Problems): string[] {
  if (env === undefined) return [];
  if (!Array.isArray(env) || !env.every((name) => typeof name === 'string' && ENV_NAME.test(name))) {
    problems.push(file.problem(['env'], 'must be a list of environment variable names (letters, digits and "_", not starting with a digit)'));
    return [];
  }
  return [...new Set(env as string[])];
}

/**
 * Local when --local (every variant then runs here) or when the file's variants say
 * `sandbox: local`. A file mixing local and server variants is refused: a suite's batches run
 * either on the server or here.
 */
function chooseLocal(file: SuiteFile, body: Json, everything: boolean, problems: Problems): boolean {
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

function isMapping(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
