import type { TrialLimits } from './trial-limits';
import { MEGABYTE } from './trial-limits';

/** The exit status of a process killed by SIGXFSZ: it wrote past RLIMIT_FSIZE. */
const FILE_TOO_LARGE_STATUS = 128 + 25;

/**
 * A limit a step hit: `reason` in words for the trial's failure. `certain` when it was measured
 * (the directory's size) or the kernel said so (SIGXFSZ); otherwise it is read from the error a
 * program printed, which a program may also print for reasons of its own.
 */
export interface LimitHit {
  reason: string;
  certain: boolean;
}

/**
 * Which of the trial's limits a step hit, or null. The directory's size is measured; the other
 * bounds are held by the kernel inside the sandbox and seen from here only through what they
 * leave: a SIGXFSZ exit, or the error printed when a fork, an allocation or a write to /tmp was
 * refused, read only from a step that failed.
 */
export function limitHit(step: { status: number; output: string }, limits: TrialLimits, directoryBytes: number, kernelBounds: boolean): LimitHit | null {
  if (directoryBytes > limits.workspaceMb * MEGABYTE) {
    const held = Math.ceil(directoryBytes / MEGABYTE);
    return { reason: `the trial's directory (workspace, home, TMPDIR) holds ${held} MB, over limits.workspaceMb (${limits.workspaceMb} MB)`, certain: true };
  }
  if (!kernelBounds || step.status === 0) return null;
  if (step.status === FILE_TOO_LARGE_STATUS) {
    return { reason: `a file reached limits.workspaceMb (${limits.workspaceMb} MB), the largest file a trial may write`, certain: true };
  }
  const printed = printedLimit(step.output, limits);
  return printed === null ? null : { reason: printed, certain: false };
}

function printedLimit(output: string, limits: TrialLimits): string | null {
  if (/Resource temporarily unavailable|Cannot fork|fork: retry/i.test(output)) {
    return `a process could not be started: the trial may run at most limits.processes (${limits.processes}) processes`;
  }
  if (/out of memory|Cannot allocate memory|allocation failed|MemoryError|bad_alloc/i.test(output)) {
    return `memory ran out: each process may use at most limits.memoryMb (${limits.memoryMb} MB)`;
  }
  if (/No space left on device/i.test(output)) return `no space was left: the private /tmp holds at most limits.tmpMb (${limits.tmpMb} MB)`;
  return null;
}
