import { MultiBar, Presets, SingleBar } from 'cli-progress';
import type { BatchView } from './batch-view';
import { countTrials, GroupCounts, groupByVariant } from './variant-groups';

/** Shows a batch's progress as it is polled; `log` prints a line without breaking the display. */
export interface ProgressDisplay {
  update(batch: BatchView): void;
  log(line: string): void;
  stop(): void;
}

export function elapsed(since: number, now = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - since) / 1000));
  const minutes = Math.floor(seconds / 60);
  return `${String(minutes).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`;
}

/** One bar per variant definition (done / total, passed, failed, void) and the elapsed time. */
export function barsDisplay(stream: NodeJS.WriteStream, startedAt: number): ProgressDisplay {
  const multibar = new MultiBar(
    {
      format: ' {label} |{bar}| {value}/{total} trials · passed {passed} · failed {failed} · void {void} · {elapsed}',
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      stream,
      // Redraws only when the counts change or the clock ticks, not on a timer of its own.
      fps: 5,
      barsize: 20,
    },
    Presets.shades_classic,
  );
  const bars = new Map<string, SingleBar>();
  let width = 0;
  return {
    update(batch) {
      const groups = groupByVariant(batch.runs);
      width = Math.max(width, ...groups.map((group) => group.label.length));
      for (const group of groups) {
        const counts = countTrials(group.runs);
        const payload = { label: group.label.padEnd(width), passed: counts.passed, failed: counts.failed, void: counts.void, elapsed: elapsed(startedAt) };
        const bar = bars.get(group.label);
        if (bar) {
          bar.setTotal(counts.total);
          bar.update(counts.done, payload);
        } else {
          bars.set(group.label, multibar.create(counts.total, counts.done, payload));
        }
      }
    },
    log(line) {
      multibar.log(`${line}\n`);
    },
    stop() {
      multibar.stop();
    },
  };
}

const sameCounts = (a: GroupCounts | undefined, b: GroupCounts) =>
  a !== undefined && a.done === b.done && a.total === b.total && a.passed === b.passed && a.failed === b.failed && a.void === b.void;

/** For logs and pipes: no escape codes, one line whenever a variant's counts change. */
export function plainDisplay(write: (line: string) => void, startedAt: number): ProgressDisplay {
  const last = new Map<string, GroupCounts>();
  return {
    update(batch) {
      for (const group of groupByVariant(batch.runs)) {
        const counts = countTrials(group.runs);
        if (sameCounts(last.get(group.label), counts)) continue;
        last.set(group.label, counts);
        write(
          `[${elapsed(startedAt)}] ${group.label}: ${counts.done}/${counts.total} trials done, ${counts.passed} passed, ${counts.failed} failed, ${counts.void} void`,
        );
      }
    },
    log: write,
    stop() {
      // Nothing to clean up: every line is already written.
    },
  };
}
