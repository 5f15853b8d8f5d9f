import { randomInt } from 'node:crypto';
import { runsAsRoot } from './host-tools';

/** The unprivileged host user a trial's processes run as. */
export interface TrialUser {
  uid: number;
  gid: number;
}

/**
 * When the server runs as root, each running trial gets a user id of its own from a range no
 * account uses: it reads nothing of the host that is not world-readable, and RLIMIT_NPROC, which
 * the kernel counts per user, bounds that trial alone. The range starts at a random slot per
 * server process so that two servers on one host rarely share an id (sharing would only pool
 * their process budgets: each trial's files and processes stay hidden in its own namespaces).
 * Below 2097152, the largest id a POSIX tar header holds.
 */
export const FIRST_TRIAL_UID = 200_000;
export const TRIAL_UID_COUNT = 100_000;

export class TrialUsers {
  private readonly taken = new Set<number>();
  private next = randomInt(TRIAL_UID_COUNT);

  /** Null when the server is not root: trials then run as the server's own (unprivileged) user. */
  take(): TrialUser | null {
    if (!runsAsRoot()) return null;
    for (let tried = 0; tried < TRIAL_UID_COUNT; tried += 1) {
      const uid = FIRST_TRIAL_UID + ((this.next + tried) % TRIAL_UID_COUNT);
      if (this.taken.has(uid)) continue;
      this.taken.add(uid);
      this.next = (uid - FIRST_TRIAL_UID + 1) % TRIAL_UID_COUNT;
      return { uid, gid: uid };
    }
    throw new Error('no free trial user id');
  }

  give(user: TrialUser | null): void {
    if (user !== null) this.taken.delete(user.uid);
  }
}
