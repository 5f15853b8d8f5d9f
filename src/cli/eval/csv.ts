/** A record of a CSV file: its cells and the line it starts on (a quoted cell may span lines). */
export interface CsvRecord {
  line: number;
  cells: string[];
}

/** A CSV file that cannot be read as one: the line where it goes wrong. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * RFC 4180 CSV: cells split by commas, a quoted cell may hold commas, line breaks and `""` for
 * a quote; `\r\n` or `\n` ends a record. Blank lines are skipped.
 */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let line = 1;
  let index = 0;
  while (index < text.length) {
    const start = line;
    const cells: string[] = [];
    let cell = '';
    let quoted = false;
    for (;;) {
      // Past the end, no character: the last record ends there.
      const char = text.at(index);
      if (quoted) {
        if (char === undefined) throw new CsvSyntaxError(start, 'a quoted cell is never closed (a " is missing)');
        index += 1;
        if (char === '"' && text[index] === '"') {
          cell += '"';
          index += 1;
        } else if (char === '"') {
          quoted = false;
        } else {
          if (char === '\n') line += 1;
          cell += char;
        }
        continue;
      }
      if (char === undefined || char === '\n' || (char === '\r' && text[index + 1] === '\n')) {
        index += char === undefined ? 0 : char === '\r' ? 2 : 1;
        cells.push(cell);
        break;
      }
      index += 1;
      if (char === ',') {
        cells.push(cell);
        cell = '';
      } else if (char === '"' && cell === '') {
        quoted = true;
      } else if (char === '"') {
        throw new CsvSyntaxError(line, 'a " inside a cell that is not quoted; quote the cell and write the quote as ""');
      } else {
        cell += char;
      }
    }
    if (!(cells.length === 1 && cells[0] === '')) records.push({ line: start, cells });
    line += 1;
  }
  return records;
}
