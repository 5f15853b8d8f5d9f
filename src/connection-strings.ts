/**
 * The connection strings the store clients take, checked at start so that a typo stops the start
 * with a message instead of failing at the first append. WHATWG URLs cannot hold a host list
 * (`esdb://a:2113,b:2113`), so both grammars are read here, as the clients read them. Messages
 * never repeat the value: a connection string may carry a password.
 */

/** Why a connection string is refused, or null when the client would take it. */
export type Refusal = string | null;

const ESDB_SCHEMES = ['esdb', 'esdb+discover'];
const MONGODB_SCHEMES = ['mongodb', 'mongodb+srv'];
/** The characters @eventstore/db-client stops a host at. */
const ESDB_HOST = /^[^$+!?*'(),;[\]{}|"%~#<>=&/:@]+$/;
const MONGODB_HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[^/?#@,:[\]\s]+)$/;

type OptionKind = 'boolean' | 'integer' | 'text' | 'nodePreference';

/** The options @eventstore/db-client 6 reads, by the flat form it compares them in. */
const ESDB_OPTIONS: ReadonlyMap<string, [string, OptionKind]> = new Map(
  (
    [
      ['tls', 'boolean'],
      ['tlsVerifyCert', 'boolean'],
      ['throwOnAppendFailure', 'boolean'],
      ['maxDiscoverAttempts', 'integer'],
      ['defaultDeadline', 'integer'],
      ['discoveryInterval', 'integer'],
      ['gossipTimeout', 'integer'],
      ['keepAliveInterval', 'integer'],
      ['keepAliveTimeout', 'integer'],
      ['connectionName', 'text'],
      ['tlsCAFile', 'text'],
      ['userCertFile', 'text'],
      ['userKeyFile', 'text'],
      ['nodePreference', 'nodePreference'],
    ] as const
  ).map(([name, kind]) => [flat(name), [name, kind]]),
);
const NODE_PREFERENCES = ['leader', 'follower', 'readonlyreplica', 'random'];

function flat(text: string): string {
  return text.trim().toLowerCase().replace(/[_-]/g, '');
}

/** Splits `scheme://authority/path?query`; the authority is everything before the first `/` or `?`. */
function split(value: string): { scheme: string; authority: string; path: string; query: string | null } | null {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?]*)([^?]*)(?:\?(.*))?$/i.exec(value);
  if (!match) return null;
  return { scheme: match[1].toLowerCase(), authority: match[2], path: match[3], query: match.at(4) ?? null };
}

/** `user:password@hosts` → the host list, or a refusal. */
function hostsOf(authority: string, example: string): string[] | string {
  const at = authority.lastIndexOf('@');
  const credentials = at >= 0 ? authority.slice(0, at) : null;
  if (credentials !== null && !/^[^:]+:.+$/.test(credentials)) return 'credentials must read user:password@ (percent-encode ":" and "@" inside them).';
  const hosts = authority.slice(at + 1);
  if (hosts === '') return `no host; expected for example ${example}.`;
  return hosts.split(',');
}

function portRefusal(port: string | undefined): Refusal {
  if (port === undefined) return null;
  return /^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535 ? null : 'a port must be a number from 1 to 65535.';
}

function esdbOptionRefusal(pair: string, seen: Map<string, string>): Refusal {
  const separator = pair.indexOf('=');
  const rawKey = separator > 0 ? pair.slice(0, separator) : '';
  const value = separator > 0 ? decodeURIComponent(pair.slice(separator + 1)).trim() : '';
  if (rawKey === '' || value === '') return 'each option must read key=value, joined by "&".';
  // The client reads dnsDiscover in this one spelling only, and for any other prints the whole string, password included.
  if (flat(rawKey) === 'dnsdiscover') return 'dnsDiscover is not taken: use esdb+discover:// for DNS discovery.';
  const known = ESDB_OPTIONS.get(flat(rawKey));
  if (!known)
    return `"${rawKey}" is not an option of the EventStoreDB client (it would be ignored); known: ${[...ESDB_OPTIONS.values()].map(([name]) => name).join(', ')}.`;
  const [name, kind] = known;
  seen.set(name, value);
  if (kind === 'boolean' && value !== 'true' && value !== 'false') return `${name} must be true or false.`;
  if (kind === 'integer' && !/^-?\d+$/.test(value)) return `${name} must be a whole number.`;
  if (kind === 'nodePreference' && !NODE_PREFERENCES.includes(flat(value))) return 'nodePreference must be leader, follower, readOnlyReplica or random.';
  if (name === 'tlsVerifyCert' && value === 'false') {
    return 'tlsVerifyCert=false has no effect in the EventStoreDB client: give the server certificate authority with tlsCAFile instead.';
  }
  return null;
}

/**
 * What @eventstore/db-client takes: `esdb://` or `esdb+discover://`, optional `user:password@`,
 * one host or a comma-separated cluster (`host[:port]`, 2113 by default), and `?key=value&…`.
 */
export function eventStoreDbRefusal(value: string): Refusal {
  // The client drops trailing slashes first, as here (but not those of a bare `esdb://`).
  const parts = split(value.endsWith('://') ? value : value.replace(/\/+$/, ''));
  if (!parts || !ESDB_SCHEMES.includes(parts.scheme)) {
    return 'the scheme must be esdb:// or esdb+discover://; for example esdb://localhost:2113?tls=false or esdb://a:2113,b:2113,c:2113.';
  }
  if (parts.path.replace(/\/+$/, '') !== '') return 'an EventStoreDB connection string has no path; options follow "?".';
  const hosts = hostsOf(parts.authority, 'esdb://localhost:2113');
  if (typeof hosts === 'string') return hosts;
  for (const host of hosts) {
    const [address, port, ...rest] = host.split(':');
    if (rest.length > 0 || !ESDB_HOST.test(address)) return 'each host must read name:port (IPv6 literals are not supported by the client).';
    const refusal = portRefusal(port);
    if (refusal) return refusal;
  }
  const seen = new Map<string, string>();
  for (const pair of parts.query === null ? [] : parts.query.split('&')) {
    const refusal = esdbOptionRefusal(pair, seen);
    if (refusal) return refusal;
  }
  if (seen.has('userCertFile') !== seen.has('userKeyFile')) return 'userCertFile and userKeyFile must be given together.';
  return null;
}

/**
 * What the MongoDB driver takes: `mongodb://` with one host or a replica set's list
 * (`host[:port]` or `[ipv6]:port`), or `mongodb+srv://` with exactly one host and no port;
 * then an optional `/database` and `?options` (the driver checks the option names).
 */
export function mongodbRefusal(value: string): Refusal {
  const parts = split(value);
  if (!parts || !MONGODB_SCHEMES.includes(parts.scheme)) {
    return 'the scheme must be mongodb:// or mongodb+srv://; for example mongodb://localhost:27017/assay or mongodb://a:27017,b:27017/assay?replicaSet=rs0.';
  }
  const hosts = hostsOf(parts.authority, 'mongodb://localhost:27017');
  if (typeof hosts === 'string') return hosts;
  if (parts.scheme === 'mongodb+srv' && (hosts.length !== 1 || /:\d*$/.test(hosts[0]))) return 'mongodb+srv:// takes exactly one host name and no port.';
  for (const host of hosts) {
    const bracketed = /^(\[[0-9A-Fa-f:.]+\])(?::(.*))?$/.exec(host);
    const [address, port, ...rest] = bracketed ? [bracketed[1], bracketed[2]] : host.split(':');
    if (rest.length > 0 || !MONGODB_HOST.test(address)) return 'each host must read name:port or [ipv6]:port, separated by commas.';
    const refusal = portRefusal(port);
    if (refusal) return refusal;
  }
  if (parts.path !== '' && !/^\/[^/\\. "$]*$/.test(parts.path)) return 'the database name after "/" may not hold "/", "\\", ".", spaces, quotes or "$".';
  // The stores write to a majority, journalled, and read the primary whatever the URL says; the
  // driver would let the URL's journal=false win over that.
  for (const pair of parts.query === null ? [] : parts.query.split('&')) {
    const [key, value = ''] = pair.split('=');
    if (['journal', 'j'].includes(key.toLowerCase()) && decodeURIComponent(value).trim().toLowerCase() === 'false') {
      return 'journal=false is not taken: the stores write journalled to a majority of the replica set; remove it.';
    }
  }
  return null;
}
