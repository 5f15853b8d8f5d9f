import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { CloneHost, isPrivateAddress, repositoryLocation, RepositoryPolicy, repositoryUrlProblem } from './repository-urls';
import { TrialVoid } from './trial-verdict';

/** Every address a host name resolves to (A and AAAA), as the system resolver answers. */
export type HostLookup = (host: string) => Promise<string[]>;

export const systemLookup: HostLookup = async (host) => (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * Checked again when the trial clones, whatever the start checked: the batch may have been
 * started under other settings, and a name only shows where it points when it is resolved.
 * Answers the environment that pins git to what was checked: only the allowed protocols (also
 * for redirects and submodules), no redirects at all, and curl connecting to the addresses
 * just resolved (so a second lookup cannot answer otherwise).
 */
export async function guardedCloneEnv(
  url: string,
  policy: RepositoryPolicy,
  lookupHost: HostLookup,
  host: CloneHost = 'server',
): Promise<Record<string, string>> {
  const problem = repositoryUrlProblem(url, policy, host);
  if (problem !== null) throw new TrialVoid(`the repository url ${problem}`, ['source']);
  const location = repositoryLocation(url);
  const config: Array<[string, string]> = [
    ['http.followRedirects', 'false'],
    ['submodule.recurse', 'false'],
  ];
  if (!('refused' in location) && location.host !== null && isIP(location.host) === 0 && !policy.allowPrivateHosts) {
    const addresses = await resolve(location.host, lookupHost);
    const inside = addresses.find(isPrivateAddress);
    if (inside !== undefined) {
      throw new TrialVoid(`the repository host ${location.host} resolves to ${inside}, a loopback, link-local or private address, which is not allowed`, [
        'source',
      ]);
    }
    if (location.transport === 'https') {
      const pinned = addresses.map((address) => (isIP(address) === 6 ? `[${address}]` : address)).join(',');
      config.push(['http.curloptResolve', `${location.host}:${location.port ?? 443}:${pinned}`]);
    }
  }
  const protocols = ['https', ...(policy.allowSsh ? ['ssh'] : []), ...(policy.allowLocal ? ['file'] : [])];
  const env: Record<string, string> = { GIT_ALLOW_PROTOCOL: protocols.join(':'), GIT_CONFIG_COUNT: String(config.length) };
  config.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}

async function resolve(host: string, lookupHost: HostLookup): Promise<string[]> {
  try {
    const addresses = await lookupHost(host);
    if (addresses.length > 0) return addresses;
  } catch (error) {
    throw new TrialVoid(`cannot resolve the repository host ${host} (${(error as NodeJS.ErrnoException).code ?? 'error'})`, ['source']);
  }
  throw new TrialVoid(`cannot resolve the repository host ${host} (no address)`, ['source']);
}
