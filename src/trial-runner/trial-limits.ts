import { ConfigShape } from './config-shape';

/**
 * What one trial may use (ASSAY_CONFIG `limits`). Each bound is enforced where the kernel can
 * hold it, so that an agent meets it as a real machine's error (EAGAIN on fork, ENOMEM, ENOSPC,
 * a file too large) rather than the host running out:
 * - processes: RLIMIT_NPROC of the trial's own user (bubblewrap, server run as root);
 * - memoryMb: RLIMIT_DATA of each process (heap and private mappings, not reserved address space);
 * - tmpMb: the size of the sandbox's private /tmp, a tmpfs held in RAM, and of /dev/shm (bubblewrap);
 * - workspaceMb: the trial's directory (workspace, home, TMPDIR), measured after every step,
 *   and RLIMIT_FSIZE, so that no single file can outgrow it during a step.
 */
export interface TrialLimits {
  processes: number;
  memoryMb: number;
  tmpMb: number;
  workspaceMb: number;
}

export const DEFAULT_TRIAL_LIMITS: TrialLimits = { processes: 1024, memoryMb: 8192, tmpMb: 1024, workspaceMb: 8192 };

const LIMIT_KEYS = Object.keys(DEFAULT_TRIAL_LIMITS) as Array<keyof TrialLimits>;

export function trialLimits(shape: ConfigShape, value: unknown): TrialLimits {
  if (value == null) return DEFAULT_TRIAL_LIMITS;
  const fields = shape.object(value, 'limits', LIMIT_KEYS);
  const limits = { ...DEFAULT_TRIAL_LIMITS };
  for (const key of LIMIT_KEYS) {
    const given = fields[key];
    if (given == null) continue;
    if (typeof given !== 'number' || !Number.isInteger(given) || given < 1 || given > 1_048_576) {
      shape.fail(`limits.${key}`, 'must be a whole number from 1 to 1048576');
    }
    limits[key] = given;
  }
  return limits;
}

export const MEGABYTE = 1024 * 1024;
