import { BlockList, isIP } from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Which repositories a case's `source.url` may name. A trial clones on the server's host, so
 * without these rules a case could copy any repository of that host (`file://`, a path) or of
 * its private network into its workspace. The operator widens them in ASSAY_CONFIG.
 */
export interface RepositoryPolicy {
  /** `ssh://host/path` and scp-like `user@host:path`. */
  allowSsh: boolean;
  /** `file://` URLs and paths on the server's host (the project's tests use local repositories). */
  allowLocal: boolean;
  /** Hosts that are or resolve to loopback, link-local, private or otherwise non-public addresses. */
  allowPrivateHosts: boolean;
}

export const STRICT_REPOSITORY_POLICY: RepositoryPolicy = { allowSsh: false, allowLocal: false, allowPrivateHosts: false };

export type RepositoryTransport = 'https' | 'ssh' | 'file';

export interface RepositoryLocation {
  transport: RepositoryTransport;
  /** The host to resolve (lower case, IPv6 without brackets); null for a local repository. */
  host: string | null;
  port: number | null;
}

/** How git reads the URL: a scheme, scp-like `host:path` (a colon before any slash), or a local path. */
export function repositoryLocation(url: string): RepositoryLocation | { refused: string } {
  // Parsers disagree on these (a backslash ends a host for some): refused rather than guessed.
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this test refuses
  if (/[\\\s\u0000-\u001f\u007f]/.test(url)) return { refused: 'contains a backslash, a space or a control character' };
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1].toLowerCase();
  if (scheme === 'https' || scheme === 'ssh') {
    const host = normalHost(
      url
        .slice(scheme.length + 3)
        .replace(/^[^/@]*@/, '')
        .split('/')[0],
    );
    if (host === null) return { refused: 'has no valid host' };
    return { transport: scheme, ...host };
  }
  if (scheme === 'file') return { transport: 'file', host: null, port: null };
  if (scheme !== undefined) return { refused: `uses ${scheme}://, which is not allowed; use https://` };
  if (/^[a-z0-9][a-z0-9+.-]*::/i.test(url)) return { refused: 'names a git remote helper, which is not allowed; use https://' };
  const scpLike = /^(?:[^@/:]+@)?(\[[^\]]+\]|[^/:[\]]+):(?!\/\/)/.exec(url);
  if (scpLike !== null && !url.slice(0, url.indexOf(':')).includes('/')) {
    const host = normalHost(scpLike[1]);
    return host === null ? { refused: 'has no valid host' } : { transport: 'ssh', host: host.host, port: null };
  }
  return { transport: 'file', host: null, port: null };
}

/**
 * The host as the WHATWG parser normalizes it (`2130706433` and `0x7f.1` are 127.0.0.1), so a
 * literal address is recognized whatever its spelling.
 */
function normalHost(authority: string): { host: string; port: number | null } | null {
  try {
    const parsed = new URL(`https://${authority}/`);
    if (parsed.hostname === '') return null;
    const host = parsed.hostname
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/\.$/, '')
      .toLowerCase();
    return { host, port: parsed.port === '' ? null : Number(parsed.port) };
  } catch {
    return null;
  }
}

/**
 * Where trials clone: on the server, or on the user's own machine (the command line's local
 * mode). Messages name the place and whose ASSAY_CONFIG holds the rule.
 */
export type CloneHost = 'server' | 'local';

const place = (host: CloneHost) =>
  host === 'server'
    ? { on: 'the server itself', allows: 'this server does not allow', config: "the server's ASSAY_CONFIG" }
    : { on: 'this machine', allows: "this machine's ASSAY_CONFIG does not allow", config: 'it' };

/** Why `url` may not be cloned under `policy`, judged from its text alone; null when it may. */
export function repositoryUrlProblem(url: string, policy: RepositoryPolicy, host: CloneHost = 'server'): string | null {
  const location = repositoryLocation(url);
  if ('refused' in location) return location.refused;
  const where = place(host);
  if (location.transport === 'file' && !policy.allowLocal) {
    return `names a repository on ${where.on} (a path or file://), which ${where.allows}: set repositories.allowLocal: true in ${where.config}, or use https://`;
  }
  if (location.transport === 'file') {
    const local = localRepositoryPath(url);
    if ('refused' in local) return local.refused;
  }
  if (location.transport === 'ssh' && !policy.allowSsh)
    return `uses ssh, which ${where.allows}: set repositories.allowSsh: true in ${where.config}, or use https://`;
  if (location.host !== null && !policy.allowPrivateHosts && isPrivateHost(location.host)) {
    return `names ${location.host}, a loopback, link-local or private address, which ${where.allows} (repositories.allowPrivateHosts in ${where.config})`;
  }
  return null;
}

/**
 * The absolute path a local repository URL (a path, or `file://`) names. A relative path would be
 * read from the trial's empty workspace, so it is refused rather than left to fail.
 */
export function localRepositoryPath(url: string): { path: string } | { refused: string } {
  if (/^file:\/\//i.test(url)) {
    try {
      return { path: path.resolve(fileURLToPath(url)) };
    } catch {
      return { refused: 'is a file:// URL of another host; give file:///absolute/path or the absolute path' };
    }
  }
  if (!path.isAbsolute(url)) return { refused: `is a relative path; give the repository's absolute path (a clone starts in an empty workspace)` };
  return { path: path.resolve(url) };
}

/** `localhost` names, and literal addresses outside the public internet. */
export function isPrivateHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isPrivateAddress(host);
}

const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Loopback, unspecified, private, shared, link-local, multicast or reserved (IPv4-mapped too). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return NON_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
