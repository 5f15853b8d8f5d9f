import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleFailure, bundleSource } from './bundle';
import type { Problems } from './problems';
import type { IssuePath, SuiteFile } from './suite-file';
import { readWorkspaceDirectory } from './workspace-directory';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Replaces the keys that name a path (relative to the suite file) by the content the body
 * needs: `promptFile` → `prompt`, `verifyFile` → `verify` (text), a validator's or prepare's
 * `sourceFile` → `source` (bundled), a files source's `directory` → `files`. A path is relative
 * to the file that holds it (a case of a casesFile: that file). Each problem is reported at its
 * line; the body is changed in place.
 */
export function loadFileReferences(suite: SuiteFile, body: Json, problems: Problems): void {
  const load = (holder: unknown, at: IssuePath, from: string, to: string, read: (file: string) => string) => {
    if (!isObject(holder) || !(from in holder)) return;
    const reference = holder[from];
    Reflect.deleteProperty(holder, from);
    if (to in holder) {
      problems.push(suite.problem([...at, from], `give ${to} or ${from}, not both`));
      return;
    }
    if (typeof reference !== 'string' || reference === '') {
      problems.push(suite.problem([...at, from], 'must be a path, relative to the file that holds it'));
      return;
    }
    try {
      holder[to] = read(path.resolve(suite.directoryOf(at), reference));
    } catch (error) {
      problems.push(suite.problem([...at, from], (error as Error).message));
    }
  };
  const text = (file: string) => readText(file);
  const bundled = (file: string) => bundle(file);

  load(body.suite, ['suite'], 'promptFile', 'prompt', text);
  loadDirectory(suite, isObject(body.suite) ? body.suite.source : undefined, ['suite', 'source'], problems);
  const cases = Array.isArray(body.cases) ? (body.cases as unknown[]) : [];
  cases.forEach((evalCase, index) => {
    if (!isObject(evalCase)) return;
    const at = ['cases', index];
    load(evalCase, at, 'promptFile', 'prompt', text);
    load(evalCase, at, 'verifyFile', 'verify', text);
    load(evalCase.user, [...at, 'user'], 'promptFile', 'prompt', text);
    const validatorFile = isObject(evalCase.validator) ? evalCase.validator.sourceFile : undefined;
    load(evalCase.validator, [...at, 'validator'], 'sourceFile', 'source', bundled);
    // The module as written travels beside its bundle: the run shows what its author wrote.
    if (isObject(evalCase.validator) && typeof validatorFile === 'string' && typeof evalCase.validator.source === 'string') {
      try {
        evalCase.validator.written = { path: validatorFile, content: readText(path.resolve(suite.directoryOf(at), validatorFile)) };
      } catch {
        // Read once already to bundle it: a problem was reported there.
      }
    }
    load(evalCase.prepare, [...at, 'prepare'], 'sourceFile', 'source', bundled);
    loadDirectory(suite, evalCase.source, [...at, 'source'], problems);
  });
}

/** `{kind: files, directory: ./dir}`: the directory's files, read into `files`. */
function loadDirectory(suite: SuiteFile, source: unknown, at: IssuePath, problems: Problems): void {
  if (!isObject(source) || source.kind !== 'files' || !('directory' in source)) return;
  const directory = source.directory;
  delete source.directory;
  const where = [...at, 'directory'];
  if ('files' in source) problems.push(suite.problem(where, 'give files or directory, not both'));
  else if (typeof directory !== 'string' || directory === '') problems.push(suite.problem(where, 'must be a path, relative to the file that holds it'));
  else {
    try {
      source.files = readWorkspaceDirectory(path.resolve(suite.directoryOf(at), directory));
    } catch (error) {
      problems.push(suite.problem(where, (error as Error).message));
    }
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function bundle(file: string): string {
  if (!fs.existsSync(file)) throw new Error(`cannot read ${file}: ENOENT`);
  try {
    return bundleSource(file);
  } catch (error) {
    throw new Error(`cannot bundle ${file}: ${bundleFailure(error)}`);
  }
}
