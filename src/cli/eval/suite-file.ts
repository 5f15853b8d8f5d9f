import * as fs from 'node:fs';
import * as path from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Document, Node } from 'yaml';

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
   * Cases left by --filter, by their index in the file: a problem of the body's `cases[0]` is
   * about the file's `cases[kept[0]]`.
   */
  keepCases(kept: number[]): void {
    this.keptCases = kept;
  }

  private keptCases: number[] | null = null;

  private inFile(at: IssuePath): IssuePath {
    if (!this.keptCases || at[0] !== 'cases' || typeof at[1] !== 'number') return at;
    return ['cases', this.keptCases[at[1]] ?? at[1], ...at.slice(2)];
  }

  /**
   * `suite.yaml:14: cases[1].verify: problem` (without a line when the file has no such part);
   * `named: false` leaves the field out, for messages that name it themselves.
   */
  problem(at: IssuePath, message: string, named = true): string {
    const where = this.inFile(at);
    const line = this.lineOf(where);
    const field = named && where.length > 0 ? `${formatPath(where)}: ` : '';
    return `${this.shownAs}${line === null ? '' : `:${line}`}: ${field}${message}`;
  }
}
