import type { TrialLimits } from './trial-limits';
import { MEGABYTE } from './trial-limits';

/** The exit status of a process killed by SIGXFSZ: it wrote past RLIMIT_FSIZE. */
const FILE_TOO_LARGE_STATUS = 128 + 25;

/**
 * Which of the trial's limits a step hit, in words for the trial's failure, or null. The
 * directory's size is measured; the other bounds are held by the kernel inside the sandbox and
 * seen from here only through what they leave: a SIGXFSZ exit, or the error a program printed
 * when a fork, an allocation or a write to /tmp was refused. Those are read only from a step
 * that failed: a step that recovered from a refused fork ends as its exit code says.
 */
export function limitHit(
  step: { status: number; output: string },
  limits: TrialLimits,
  directoryBytes: number,
  kernelBounds: boolean,
): string | null {
  if (directoryBytes > limits.workspaceMb * MEGABYTE) {
    return `the trial's directory (workspace, home, TMPDIR) holds ${Math.ceil(directoryBytes / MEGABYTE)} MB, over limits.workspaceMb (${limits.workspaceMb} MB)`;
  }
  if (!kernelBounds || step.status === 0) return null;
  if (step.status === FILE_TOO_LARGE_STATUS) return `a file reached limits.workspaceMb (${limits.workspaceMb} MB), the largest file a trial may write`;
  if (/Resource temporarily unavailable|Cannot fork|fork: retry/i.test(step.output)) {
    return `a process could not be started: the trial may run at most limits.processes (${limits.processes}) processes`;
  }
  if (/out of memory|Cannot allocate memory|allocation failed|MemoryError|bad_alloc/i.test(step.output)) {
    return `memory ran out: each process may use at most limits.memoryMb (${limits.memoryMb} MB)`;
  }
  if (/No space left on device/i.test(step.output)) return `no space was left: the private /tmp holds at most limits.tmpMb (${limits.tmpMb} MB)`;
  return null;
}
