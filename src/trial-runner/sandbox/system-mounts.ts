import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import * as path from 'node:path';

/**
 * What of the host a bubblewrap sandbox sees: the system's programs, libraries and configuration,
 * read-only, and nothing else of the host's files (not /root, /home, /var, /srv, /opt, /mnt…).
 * A link such as /bin -> usr/bin on a merged-/usr system stays a link.
 */
export const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

/** Secrets of /etc hidden even from the read-only view (root-only on most hosts: a second wall). */
const ETC_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/security/opasswd',
  '/etc/ssl/private',
  '/etc/sudoers',
  '/etc/sudoers.d',
];

export function systemMounts(): string[] {
  const args: string[] = [];
  for (const entry of SYSTEM_PATHS) {
    const found = lstatOrNull(entry);
    if (found === null) continue;
    if (found.isSymbolicLink()) args.push('--symlink', readlinkSync(entry), entry);
    else args.push('--ro-bind', entry, entry);
  }
  return args;
}

/** Paths under /etc to cover: the fixed secrets and the SSH host keys. */
export function etcSecrets(): string[] {
  let hostKeys: string[] = [];
  try {
    hostKeys = readdirSync('/etc/ssh')
      .filter((name) => /^ssh_host_.*_key$/.test(name))
      .map((name) => path.join('/etc/ssh', name));
  } catch {
    // No SSH server configuration.
  }
  return [...ETC_SECRETS, ...hostKeys];
}

/**
 * The install prefix of the node running the service when it lies outside the system paths
 * (/opt/node/bin/node binds /opt/node): harnesses and installs often run node. Bound after the
 * hiding mounts, so that it shows even when it lies under a hidden place (/root/.nvm).
 */
export function runtimeMounts(): string[] {
  const prefix = path.dirname(path.dirname(process.execPath));
  const outside = !SYSTEM_PATHS.some((system) => prefix === system || prefix.startsWith(`${system}/`));
  return outside && prefix !== '/' ? ['--ro-bind', prefix, prefix] : [];
}

function lstatOrNull(entry: string) {
  try {
    return lstatSync(entry);
  } catch {
    return null;
  }
}
