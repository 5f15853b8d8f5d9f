import { BlockList, isIP } from 'node:net';

/**
 * Whether a peer address falls in one of the CIDR ranges. IPv4 peers seen through an IPv6
 * socket (`::ffff:127.0.0.1`) count as their IPv4 address.
 */
export function inRanges(address: string | undefined, ranges: readonly string[]): boolean {
  if (!address) return false;
  const peer = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  const family = isIP(peer);
  if (family === 0) return false;
  const list = new BlockList();
  for (const range of ranges) {
    const [network, bits] = range.split('/');
    const rangeFamily = isIP(network);
    if (rangeFamily !== 0) list.addSubnet(network, Number(bits), rangeFamily === 4 ? 'ipv4' : 'ipv6');
  }
  return list.check(peer, family === 4 ? 'ipv4' : 'ipv6');
}
