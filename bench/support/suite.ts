import type { Row } from './table';

/** Progress of a long operation, written to stderr so that stdout holds only the tables. */
export interface Progress {
  /** One line, prefixed with the suite's name and the seconds since it started. */
  log(message: string): void;
  /**
   * A counter for a loop of `total` steps: `tick()` once per step logs a line at every tenth
   * (and at the end), with the count done.
   */
  counter(label: string, total: number): { tick(steps?: number): void };
}

/** A benchmark suite: registered in bench/suites.ts, run by name from bench/run.ts. */
export interface Suite {
  /** What `npm run bench -- <name>` selects it by. */
  name: string;
  /** One line printed above the suite's table: what is measured against what. */
  description?: string;
  /** Run only when named (`npm run bench -- peers`), never by a bare `npm run bench`. */
  explicit?: boolean;
  run(progress: Progress): Promise<Row[]>;
}

export function stderrProgress(suite: string, write: (line: string) => void = (line) => process.stderr.write(line)): Progress {
  const started = Date.now();
  const log = (message: string) => write(`[${suite} +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
  return {
    log,
    counter(label, total) {
      const step = Math.max(1, Math.ceil(total / 10));
      let done = 0;
      let nextReport = step;
      return {
        tick(steps = 1) {
          done += steps;
          if (done < nextReport && done < total) return;
          log(`${label}: ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`);
          while (nextReport <= done) nextReport += step;
        },
      };
    },
  };
}
