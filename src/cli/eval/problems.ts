/**
 * One thing wrong with a suite file, as the user reads it (`suite.yaml:14: cases[1].verify: …`),
 * with where it sits for the order of the list: the suite file's line, then the line inside a
 * file the suite loads from there (a casesFile).
 */
export interface Problem {
  text: string;
  order: [number, number];
}

/** A problem that no line of the file holds (it comes after those that one does). */
export const unplaced = (text: string): Problem => ({ text, order: [Number.MAX_SAFE_INTEGER, 0] });

/** The problems of one suite file, told in file order, each once. */
export class Problems {
  private readonly list: Problem[] = [];

  push(problem: Problem): void {
    this.list.push(problem);
  }

  get length(): number {
    return this.list.length;
  }

  /** By line, then in the order found; a problem found twice (in two batches of a split suite) once. */
  inFileOrder(): string[] {
    const sorted = this.list
      .map((problem, found) => ({ problem, found }))
      .sort((a, b) => a.problem.order[0] - b.problem.order[0] || a.problem.order[1] - b.problem.order[1] || a.found - b.found);
    return [...new Set(sorted.map(({ problem }) => problem.text))];
  }
}
