import { realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { SandboxDriverName } from '../execution-config';

/**
 * A sandbox driver turns "run this shell command in this trial's workspace" into the program to
 * spawn. Each trial has its own directory (workspace, home, tmp) that is the only writable place.
 */
export interface SandboxLaunchOptions {
  /** The trial's own directory; it holds the workspace and is the only writable path. */
  trialDir: string;
  workspace: string;
  network: boolean;
  /** False only for the clone, which may read a repository from the host's /tmp. */
  privateTmp: boolean;
}

export interface SandboxLaunch {
  file: string;
  args: string[];
  cwd: string;
  /** True when the launcher reports on fd 3 whether the command itself started (bubblewrap). */
  reportsStatus: boolean;
}

export interface SandboxDriver {
  readonly name: SandboxDriverName;
  launch(command: string, options: SandboxLaunchOptions): SandboxLaunch;
}

/** A plain child process in the trial's directory: no isolation, for hosts without bubblewrap. */
export const processDriver: SandboxDriver = {
  name: 'process',
  launch: (command, options) => ({ file: 'sh', args: ['-c', command], cwd: options.workspace, reportsStatus: false }),
};

/**
 * Hidden in every bubblewrap sandbox: home directories, and /run, whose Unix sockets (D-Bus, a
 * container engine, a local database) stay connectable on a read-only mount and would greet
 * the sandbox's processes as root.
 */
export const ALWAYS_HIDDEN = ['/root', '/home', '/run'];

/**
 * bubblewrap: the host's system read-only, fresh /dev and /proc (the service's own processes and
 * their environment, which holds its keys, are not visible), a private /tmp, no capabilities
 * (as root, bwrap would otherwise keep them, and CAP_SYS_ADMIN could unmount what we hide), and
 * no network unless allowed. The data directory, every trial directory, the operator's
 * `hiddenPaths` and ALWAYS_HIDDEN are covered by empty mounts; only this trial's directory is
 * bound back (and, with network, the resolver configuration if it lives in a hidden place).
 */
export class BubblewrapDriver implements SandboxDriver {
  readonly name = 'bubblewrap' as const;
  private readonly hidden: string[];

  constructor(hiddenPaths: readonly string[]) {
    this.hidden = [...new Set([...ALWAYS_HIDDEN, ...hiddenPaths].map((entry) => path.resolve(entry)))];
  }

  launch(command: string, options: SandboxLaunchOptions): SandboxLaunch {
    const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
    if (options.privateTmp) args.push('--tmpfs', '/tmp');
    args.push(...hidingMounts(this.hidden, options.privateTmp ? ['/tmp'] : []));
    if (options.network) args.push(...resolverMounts(this.hidden));
    args.push('--bind', options.trialDir, options.trialDir);
    if (!options.network) args.push('--unshare-net');
    args.push('--unshare-pid', '--unshare-ipc', '--die-with-parent', '--new-session', '--cap-drop', 'ALL');
    args.push('--chdir', options.workspace, '--json-status-fd', '3', '--', 'sh', '-c', command);
    return { file: 'bwrap', args, cwd: options.workspace, reportsStatus: true };
  }
}

/**
 * Mount arguments that hide each existing path: an empty tmpfs over a directory, /dev/null over
 * a file. Symbolic links are resolved (a mount follows them anyway), and a path already inside
 * a hidden one is skipped. Checked per launch: the paths may appear after the server started.
 */
export function hidingMounts(paths: readonly string[], alreadyHidden: readonly string[]): string[] {
  const targets: Array<{ target: string; directory: boolean }> = [];
  for (const entry of paths) {
    try {
      const target = realpathSync(entry);
      if (target !== '/') targets.push({ target, directory: statSync(target).isDirectory() });
    } catch {
      // Absent: nothing to hide.
    }
  }
  targets.sort((a, b) => a.target.length - b.target.length);
  const covered = [...alreadyHidden];
  const args: string[] = [];
  for (const { target, directory } of targets) {
    if (covered.some((parent) => isInside(target, parent))) continue;
    covered.push(target);
    args.push(...(directory ? ['--tmpfs', target] : ['--ro-bind', '/dev/null', target]));
  }
  return args;
}

/** /etc/resolv.conf is often a link into /run (systemd-resolved): bind its target back for DNS. */
function resolverMounts(hidden: readonly string[]): string[] {
  try {
    const target = realpathSync('/etc/resolv.conf');
    return hidden.some((parent) => isInside(target, parent)) ? ['--ro-bind', target, target] : [];
  } catch {
    return [];
  }
}

export function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
