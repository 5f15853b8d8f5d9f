import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SandboxDriverName } from '../execution-config';
import { DEFAULT_TRIAL_LIMITS } from '../trial-limits';
import { bubblewrapMissing, runsAsRoot } from './host-tools';
import { BubblewrapDriver } from './sandbox-driver';
import { FIRST_TRIAL_UID } from './trial-user';

export interface DefaultSandbox {
  driver: SandboxDriverName;
  /** One line for the start-up log: why this driver. */
  reason: string;
}

let probe: Promise<DefaultSandbox> | null = null;

/**
 * The driver for variants with no sandbox: the configured `defaultSandbox`, else bubblewrap when
 * it works on this host, else a plain process. The host is probed once per process, not per
 * trial: a probe is a spawn, and trials must stay cheap.
 */
export function detectDefaultSandbox(configured: SandboxDriverName | null = null): Promise<DefaultSandbox> {
  if (configured !== null) {
    return Promise.resolve({ driver: configured, reason: `defaultSandbox is set to ${configured} in the execution config` });
  }
  probe ??= probeBubblewrap();
  return probe;
}

const unusable = (detail: string): DefaultSandbox => ({
  driver: 'process',
  reason: `bubblewrap is not usable on this host (${detail}); trials run as plain processes without isolation`,
});

/** Runs `true` with exactly the arguments of a trial's step (its mounts, limits and user drop). */
function probeBubblewrap(): Promise<DefaultSandbox> {
  const missing = bubblewrapMissing();
  if (missing !== null) return Promise.resolve(unusable(missing));
  const directory = mkdtempSync(path.join(tmpdir(), 'assay-probe-'));
  const user = runsAsRoot() ? { uid: FIRST_TRIAL_UID, gid: FIRST_TRIAL_UID } : null;
  if (user !== null) chownSync(directory, user.uid, user.gid);
  const options = { trialDir: directory, workspace: directory, network: false, user, limits: DEFAULT_TRIAL_LIMITS };
  const launch = new BubblewrapDriver([]).launch('true', options);
  const args = launch.args.filter((arg, index, all) => arg !== '--json-status-fd' && all[index - 1] !== '--json-status-fd');
  return new Promise((resolve) => {
    execFile(launch.file, args, { timeout: 10_000, env: { PATH: '/usr/bin:/bin' }, cwd: directory }, (error, _stdout, stderr) => {
      rmSync(directory, { recursive: true, force: true });
      if (error === null) {
        resolve({ driver: 'bubblewrap', reason: 'bubblewrap works on this host (a probe sandbox ran)' });
        return;
      }
      resolve(unusable(stderr.trim().split('\n')[0] || error.message.split('\n')[0]));
    });
  });
}
