import { existsSync, realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { SandboxDriverName } from '../execution-config';
import { MEGABYTE, TrialLimits } from '../trial-limits';
import { accountFiles } from '../workspace/trial-directory';
import { findHostTool } from './host-tools';
import { SUPERVISOR } from './session-protocol';
import { etcSecrets, runtimeMounts, systemMounts } from './system-mounts';
import type { TrialUser } from './trial-user';

/**
 * A sandbox driver turns "run this shell command in this trial's workspace" into the program to
 * spawn. Each trial has its own directory (workspace, home, tmp) that is the only writable place.
 */
export interface SandboxLaunchOptions {
  /** The trial's own directory; it holds the workspace and is the only writable path. */
  trialDir: string;
  workspace: string;
  network: boolean;
  /** The unprivileged user the command runs as; null when the server itself is not root. */
  user: TrialUser | null;
  limits: TrialLimits;
  /** The model gateway's socket and forwarder, bound into a sandbox without a network (GATEWAY_SOCKET, GATEWAY_FORWARDER). */
  gateway?: { socket: string; forwarder: string } | null;
  /** A built-in agent's install on the host, bound read-only at AGENT_MOUNT. */
  agent?: string | null;
  /** Host directories bound read-only at their own path (a local repository, for its clone); each passed readableProblem. */
  readOnly?: readonly string[];
}

/** Where a bubblewrap sandbox sees its built-in agent's install (read-only). */
export const AGENT_MOUNT = '/run/assay/agent';

/** Where a sandbox without a network finds the model gateway's unix socket and the forwarder to it. */
export const GATEWAY_SOCKET = '/run/assay/gateway.sock';
export const GATEWAY_FORWARDER = '/run/assay/forwarder.py';

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
  /**
   * The launch of one sandbox for a whole trial, whose supervisor runs the trial's commands one
   * after another (sandbox-session.ts); null when the driver runs each command on its own.
   * `controlDir` is the service's directory the supervisor reads each command from.
   */
  sessionLaunch?(options: SandboxLaunchOptions, controlDir: string): SandboxLaunch | null;
}

/**
 * A plain child process in the trial's directory: no isolation and no limits but the measured
 * workspace, for hosts without bubblewrap. The shell is named by its path: a trial's PATH must
 * not decide what starts.
 */
export const processDriver: SandboxDriver = {
  name: 'process',
  launch: (command, options) => ({ file: '/bin/sh', args: ['-c', command], cwd: options.workspace, reportsStatus: false }),
};

/**
 * Hidden in every bubblewrap sandbox: home directories, and /run, whose Unix sockets (D-Bus, a
 * container engine, a local database) stay connectable on a read-only mount. Outside the system
 * paths, so not bound anyway; covered all the same, should one be a link into a bound place.
 */
export const ALWAYS_HIDDEN = ['/root', '/home', '/run'];

/**
 * bubblewrap: only the host's system (SYSTEM_PATHS) read-only, minus the secrets of /etc; fresh
 * /dev and /proc (the service's own processes and their environment, which holds its keys, are
 * not visible); a private /tmp of `tmpMb`; no network unless allowed. The data directory, every
 * trial directory, the operator's `hiddenPaths` and ALWAYS_HIDDEN are covered by empty mounts;
 * only this trial's directory is bound back. The command then runs under prlimit (the trial's
 * limits) and, when the server is root, setpriv, which drops to the trial's own user with no
 * capabilities and no way to regain them (no_new_privs): a root-only host file stays unreadable.
 */
export class BubblewrapDriver implements SandboxDriver {
  readonly name = 'bubblewrap' as const;
  private readonly hidden: string[];

  constructor(hiddenPaths: readonly string[]) {
    this.hidden = [...new Set([...ALWAYS_HIDDEN, ...hiddenPaths].map((entry) => path.resolve(entry)))];
  }

  launch(command: string, options: SandboxLaunchOptions): SandboxLaunch {
    const args = [...this.sandboxArgs(options), '--', ...trialCommand(command, options)];
    return { file: findHostTool('bwrap') ?? 'bwrap', args, cwd: options.workspace, reportsStatus: true };
  }

  /**
   * The same sandbox, with its limits, running the supervisor as root: it drops to the trial's
   * user for each command (setpriv), which is why a session needs a trial user of its own (a
   * supervisor running as the commands' user could be signalled, or read, by them). Without one
   * (a server that is not root), each command keeps its own sandbox.
   */
  sessionLaunch(options: SandboxLaunchOptions, controlDir: string): SandboxLaunch | null {
    const { user } = options;
    if (user === null) return null;
    const supervisor = ['/bin/sh', '-c', SUPERVISOR, 'assay-session', String(user.uid), String(user.gid), options.workspace, setprivPath(), controlDir];
    const args = [...this.sandboxArgs(options), '--', ...limitsCommand(options), '--', ...supervisor];
    return { file: findHostTool('bwrap') ?? 'bwrap', args, cwd: options.workspace, reportsStatus: true };
  }

  private sandboxArgs(options: SandboxLaunchOptions): string[] {
    const tmpfs = (target: string) => ['--perms', '1777', '--size', String(options.limits.tmpMb * MEGABYTE), '--tmpfs', target];
    // /dev/shm (POSIX shared memory: Python's multiprocessing, browsers) is RAM too: bounded like /tmp.
    const args = [...systemMounts(), '--dev', '/dev', ...tmpfs('/dev/shm'), '--proc', '/proc', ...tmpfs('/tmp')];
    args.push(...hidingMounts([...etcSecrets(), ...this.hidden], ['/tmp']), ...runtimeMounts());
    // After the hiding mounts, so a repository under a hidden home shows; its parents made traversable for the trial's user.
    for (const directory of options.readOnly ?? []) args.push(...parentDirectories(directory), '--ro-bind', directory, directory);
    if (options.network) args.push(...resolverMounts(this.hidden));
    // Inside the hidden /run: the gateway's socket and the forwarder that serves it on the sandbox's own loopback.
    const gateway = !options.network && options.gateway ? options.gateway : null;
    if (gateway !== null || options.agent) args.push('--perms', '0755', '--dir', path.dirname(GATEWAY_SOCKET));
    if (gateway !== null) args.push('--bind', gateway.socket, GATEWAY_SOCKET, '--ro-bind', gateway.forwarder, GATEWAY_FORWARDER);
    // The agent's install, shared by every trial of its version: read-only, so no trial can change another's agent.
    if (options.agent) args.push('--ro-bind', options.agent, AGENT_MOUNT);
    // bwrap makes missing parents with the host's modes: the trials root (0700, root's) would bar the trial's user.
    args.push('--perms', '0755', '--dir', path.dirname(options.trialDir), '--bind', options.trialDir, options.trialDir);
    args.push(...accountMounts(options.trialDir));
    if (!options.network) args.push('--unshare-net');
    args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session');
    // As root, setpriv drops the capabilities itself, after it changed user (which needs one).
    if (options.user === null) args.push('--cap-drop', 'ALL');
    args.push('--chdir', options.workspace, '--json-status-fd', '3');
    return args;
  }
}

/**
 * prlimit, then setpriv, then the shell, all by absolute path (a name not found on the host is
 * left as it is: bwrap then fails to start it, and says so). RLIMIT_NPROC is counted per user,
 * so it is set only when the trial has a user of its own.
 */
export function trialCommand(command: string, options: Pick<SandboxLaunchOptions, 'user' | 'limits'>): string[] {
  const { user } = options;
  const drop =
    user === null
      ? []
      : [setprivPath(), `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'];
  return [...limitsCommand(options), '--', ...drop, '/bin/sh', '-c', command];
}

/** prlimit with the trial's limits (RLIMIT_NPROC only for a user of its own: it is counted per user). */
function limitsCommand(options: Pick<SandboxLaunchOptions, 'user' | 'limits'>): string[] {
  const { limits, user } = options;
  const bound = (megabytes: number) => `${megabytes * MEGABYTE}:${megabytes * MEGABYTE}`;
  const prlimit = [findHostTool('prlimit') ?? 'prlimit', `--data=${bound(limits.memoryMb)}`, `--fsize=${bound(limits.workspaceMb)}`];
  if (user !== null) prlimit.push(`--nproc=${limits.processes}:${limits.processes}`);
  return prlimit;
}

function setprivPath(): string {
  return findHostTool('setpriv') ?? 'setpriv';
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

/**
 * Why a host directory the operator's settings let a trial read (a local repository) may not be
 * given to it, whatever the driver; null when it may. It must neither hold nor lie inside what
 * trials never see: `hidden` (the data directory, the trials root, `hiddenPaths`), the secrets of
 * /etc; inside a home directory (hidden from sandboxes as a whole) is fine, holding one is not.
 */
export function readableProblem(hostPath: string, hidden: readonly string[]): string | null {
  for (const entry of [...etcSecrets(), ...ALWAYS_HIDDEN, ...hidden].map(realOrGiven)) {
    if (isInside(entry, hostPath)) return `holds ${entry}, which trials never see`;
  }
  for (const entry of hidden.map(realOrGiven)) if (isInside(hostPath, entry)) return `lies inside ${entry}, which trials never see`;
  return null;
}

/** `--dir` for each parent of a bound directory, traversable (bwrap would copy the host's modes: a home's 0700 bars the trial's user). */
function parentDirectories(directory: string): string[] {
  const parents: string[] = [];
  for (let parent = path.dirname(directory); parent !== path.dirname(parent); parent = path.dirname(parent)) parents.unshift(parent);
  return parents.flatMap((parent) => ['--perms', '0755', '--dir', parent]);
}

function realOrGiven(entry: string): string {
  try {
    return realpathSync(entry);
  } catch {
    return path.resolve(entry);
  }
}

/** The trial's passwd and group (written with the trial's user in them) over the host's. */
function accountMounts(trialDir: string): string[] {
  const [passwd, group] = accountFiles(trialDir);
  return [
    [passwd, '/etc/passwd'],
    [group, '/etc/group'],
  ].flatMap(([file, target]) => (existsSync(file) ? ['--ro-bind', file, target] : []));
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
