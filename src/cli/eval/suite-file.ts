import * as fs from 'node:fs';
import * as path from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Document, Node } from 'yaml';
import { Problem, unplaced } from './problems';

export type IssuePath = Array<string | number>;

/** A suite file that cannot run: each problem as `file:line: field: what is wrong`. */
export class InvalidSuiteFile extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
  }
}

/** `cases[1].verify`: the path as a reader of the file names the field. */
export function formatPath(at: IssuePath): string {
  return at.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${key}` : key), '');
}

/**
 * Keys of the file that become other keys of the body: an issue the server's decoder finds at
 * `cases[1].verify` points at the `verifyFile` line the value came from.
 */
const LOADED_FROM: Record<string, string[]> = {
  prompt: ['promptFile'],
  verify: ['verifyFile'],
  source: ['sourceFile'],
  files: ['directory'],
};

/** A parsed suite file with the positions of its keys, for messages that name a line. */
export class SuiteFile {
  private constructor(
    readonly file: string,
    readonly shownAs: string,
    private readonly document: Document.Parsed,
    private readonly lines: LineCounter,
  ) {}

  /** Reads and parses a YAML or JSON file (JSON is YAML); a syntax error names its line. */
  static read(file: string): SuiteFile {
    const shownAs = path.relative(process.cwd(), file) || file;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new InvalidSuiteFile([`${shownAs}: cannot read the file: ${(error as Error).message}`]);
    }
    const lines = new LineCounter();
    const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
    if (document.errors.length > 0) {
      throw new InvalidSuiteFile(document.errors.map((error) => `${shownAs}:${lines.linePos(error.pos[0]).line}: ${error.message.split('\n')[0]}`));
    }
    return new SuiteFile(file, shownAs, document, lines);
  }

  get directory(): string {
    return path.dirname(path.resolve(this.file));
  }

  content(): unknown {
    return this.document.toJS({ maxAliasCount: 100 }) as unknown;
  }

  /**
   * The line of the deepest part of `at` that the file holds: the key's own line for a map
   * entry, the element's for a list item; a key loaded from a file is found by its `…File` name.
   */
  lineOf(at: IssuePath): number | null {
    let node: unknown = this.document.contents;
    let offset: number | null = (node as Node | null)?.range?.[0] ?? null;
    for (const key of at) {
      if (isSeq(node) && typeof key === 'number' && key < node.items.length) {
        node = node.items[key];
        offset = (node as Node | null)?.range?.[0] ?? offset;
      } else if (isMap(node)) {
        const names = [String(key), ...(LOADED_FROM[String(key)] ?? [])];
        const pair = node.items.find((item) => names.includes(String((item.key as { value?: unknown } | null)?.value)));
        if (!pair) break;
        offset = (pair.key as Node | null)?.range?.[0] ?? offset;
        node = pair.value;
      } else {
        break;
      }
    }
    return offset === null ? null : this.lines.linePos(offset).line;
  }

  /**
   * Cases taken from a casesFile: the body's `cases[i]` is the record at `lines[i]` of that
   * file, whose relative paths are relative to its own directory.
   */
  useCasesFrom(file: string, lines: number[]): void {
    const shownAs = path.relative(process.cwd(), file) || file;
    const keyLine = this.lineOf(['casesFile']) ?? 0;
    this.caseOrigins = lines.map((line) => ({ shownAs, directory: path.dirname(path.resolve(file)), line, keyLine }));
  }

  /**
   * Cases left by --filter or --tag, by their index before it: a problem of the body's
   * `cases[0]` is about the case that was at `kept[0]`.
   */
  keepCases(kept: number[]): void {
    const origins = this.caseOrigins;
    this.caseOrigins = kept.map((index) => origins?.[index] ?? index);
  }

  private caseOrigins: CaseOrigin[] | null = null;

  private originOf(at: IssuePath): CaseOrigin | null {
    if (at[0] !== 'cases' || typeof at[1] !== 'number' || !this.caseOrigins) return null;
    return this.caseOrigins[at[1]] ?? null;
  }

  /** The directory a relative path at `at` is read from: the suite's, or its casesFile's for a case from there. */
  directoryOf(at: IssuePath): string {
    const origin = this.originOf(at);
    return typeof origin === 'object' && origin !== null ? origin.directory : this.directory;
  }

  /**
   * `suite.yaml:14: cases[1].verify: problem` (without a line when the file has no such part),
   * or `cases.jsonl:3: verify: problem` for a case of a casesFile; `named: false` leaves the
   * field out, for messages that name it themselves.
   */
  problem(at: IssuePath, message: string, named = true): Problem {
    const origin = this.originOf(at);
    if (typeof origin === 'object' && origin !== null) {
      const field = named && at.length > 2 ? `${formatPath(at.slice(2))}: ` : '';
      return { text: `${origin.shownAs}:${origin.line}: ${field}${message}`, order: [origin.keyLine, origin.line] };
    }
    const where = typeof origin === 'number' ? ['cases', origin, ...at.slice(2)] : at;
    const line = this.lineOf(where);
    const field = named && where.length > 0 ? `${formatPath(where)}: ` : '';
    return { text: `${this.shownAs}${line === null ? '' : `:${line}`}: ${field}${message}`, order: [line ?? 0, 0] };
  }

  /** A problem of the whole file, at no line of it. */
  plain(message: string): Problem {
    return unplaced(`${this.shownAs}: ${message}`);
  }
}

/** Where a case of the body came from: its index in the suite file's `cases`, or a record of a casesFile. */
type CaseOrigin = number | { shownAs: string; directory: string; line: number; keyLine: number };
