import { execFile } from 'node:child_process';
import type { SandboxDriverName } from '../execution-config';

export interface DefaultSandbox {
  driver: SandboxDriverName;
  /** One line for the start-up log: why this driver. */
  reason: string;
}

/** The flags the bubblewrap driver always uses: if these work, every trial's sandbox can start. */
const PROBE_ARGS = [
  '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp',
  '--unshare-net', '--unshare-pid', '--unshare-ipc', '--die-with-parent', '--new-session', '--cap-drop', 'ALL',
  'true',
];

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

function probeBubblewrap(): Promise<DefaultSandbox> {
  return new Promise((resolve) => {
    execFile('bwrap', PROBE_ARGS, { timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }, (error, _stdout, stderr) => {
      if (error === null) {
        resolve({ driver: 'bubblewrap', reason: 'bubblewrap works on this host (a probe sandbox ran)' });
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      const detail = code === 'ENOENT' ? 'bwrap is not installed' : (stderr.trim().split('\n')[0] || error.message.split('\n')[0]);
      resolve({ driver: 'process', reason: `bubblewrap is not usable on this host (${detail}); trials run as plain processes without isolation` });
    });
  });
}
