import * as fs from 'node:fs';
import * as path from 'node:path';
import { CsvSyntaxError, parseCsv } from './csv';
import type { Problems } from './problems';
import type { SuiteFile } from './suite-file';

type Json = Record<string, unknown>;

/** The cases a file holds, each with the line it starts on; or the problems that stop it being read. */
interface ReadCases {
  cases: Json[];
  lines: number[];
  problems: Array<{ line: number; message: string }>;
}

/** Case fields a CSV cell holds as a whole number. */
const INTEGER_FIELDS = new Set(['maxTurns', 'timeoutMs']);

/**
 * `casesFile: ./cases.jsonl` (or `.csv`) in place of `cases`: the body's cases are read from
 * the file, one a line in JSON lines, one a record in CSV. The suite file then reports a
 * problem of such a case at the case's own line of that file.
 */
export function loadCasesFile(suite: SuiteFile, body: Json, problems: Problems): void {
  if (!('casesFile' in body)) return;
  const reference = body.casesFile;
  delete body.casesFile;
  if ('cases' in body) {
    problems.push(suite.problem(['casesFile'], 'give cases or casesFile, not both'));
    return;
  }
  if (typeof reference !== 'string' || !/\.(jsonl|ndjson|csv)$/i.test(reference)) {
    problems.push(suite.problem(['casesFile'], 'must be the path of a .jsonl or .csv file, relative to the suite file'));
    return;
  }
  const file = path.resolve(suite.directory, reference);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    problems.push(suite.problem(['casesFile'], `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`));
    return;
  }
  const read = /\.csv$/i.test(reference) ? casesOfCsv(text) : casesOfJsonLines(text);
  const shownAs = path.relative(process.cwd(), file) || file;
  const keyLine = suite.lineOf(['casesFile']) ?? 0;
  for (const { line, message } of read.problems) problems.push({ text: `${shownAs}:${line}: ${message}`, order: [keyLine, line] });
  if (read.problems.length > 0) return;
  if (read.cases.length === 0) {
    problems.push(suite.problem(['casesFile'], `${shownAs} holds no case`));
    return;
  }
  body.cases = read.cases;
  suite.useCasesFrom(file, read.lines);
}

/** One JSON object a line; blank lines are skipped. */
function casesOfJsonLines(text: string): ReadCases {
  const read: ReadCases = { cases: [], lines: [], problems: [] };
  text.split('\n').forEach((content, index) => {
    if (content.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(content);
    } catch (error) {
      read.problems.push({ line: index + 1, message: `not JSON: ${(error as Error).message}` });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      read.problems.push({ line: index + 1, message: 'a line holds one case, as a JSON object' });
      return;
    }
    read.cases.push(value as Json);
    read.lines.push(index + 1);
  });
  return read;
}

/**
 * A header of case fields (`id`, `verify`, `variables.word`, `validator.sourceFile`: a dot goes
 * one level down), then a case a record. An empty cell leaves its field out; `tags` holds tags
 * separated by spaces; `maxTurns` and `timeoutMs` hold numbers.
 */
function casesOfCsv(text: string): ReadCases {
  const read: ReadCases = { cases: [], lines: [], problems: [] };
  let records;
  try {
    records = parseCsv(text);
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw error;
    read.problems.push({ line: error.line, message: error.message });
    return read;
  }
  if (records.length === 0) return read;
  const [header, ...rows] = records;
  const problem = headerProblem(header.cells);
  if (problem) {
    read.problems.push({ line: header.line, message: problem });
    return read;
  }
  for (const row of rows) {
    if (row.cells.length !== header.cells.length) {
      read.problems.push({ line: row.line, message: `has ${row.cells.length} cells, and the header ${header.cells.length}` });
      continue;
    }
    read.cases.push(caseOfRow(header.cells, row.cells));
    read.lines.push(row.line);
  }
  return read;
}

function headerProblem(columns: string[]): string | null {
  const seen = new Set<string>();
  for (const column of columns) {
    if (column.trim() === '' || column.split('.').some((part) => part === '')) return `the header names a column "${column}"; name each column by a case field`;
    if (seen.has(column)) return `the header names the column "${column}" twice`;
    seen.add(column);
  }
  return null;
}

function caseOfRow(columns: string[], cells: string[]): Json {
  const evalCase: Json = {};
  columns.forEach((column, index) => {
    const cell = cells[index];
    if (cell === '') return;
    // A variable's name is the rest of the column, dots included.
    const keys = column.startsWith('variables.') ? ['variables', column.slice('variables.'.length)] : column.split('.');
    let holder = evalCase;
    for (const key of keys.slice(0, -1)) {
      const next = holder[key];
      holder = (holder[key] = typeof next === 'object' && next !== null ? next : {}) as Json;
    }
    const field = keys[keys.length - 1];
    holder[field] = keys.length === 1 ? cellValue(field, cell) : cell;
  });
  return evalCase;
}

function cellValue(field: string, cell: string): unknown {
  if (field === 'tags') return cell.split(/\s+/).filter((tag) => tag !== '');
  if (INTEGER_FIELDS.has(field) && /^\d+$/.test(cell.trim())) return Number(cell.trim());
  return cell;
}
