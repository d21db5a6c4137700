import { BlockList, isIP } from 'node:net';

/**
 * Every range an outbound request made on a user's or an admin's behalf must not reach unless explicitly
 * allowed (media proxy, identity providers, interaction endpoints): loopback, private, link-local, carrier-
 * grade NAT, documentation, benchmarking, multicast and reserved space, and the IPv6 forms that embed an
 * IPv4 address (IPv4-compatible ::/96, NAT64, 6to4, Teredo). IPv4-mapped addresses (::ffff:a.b.c.d) are
 * matched against the IPv4 ranges by `BlockList` itself.
 */
const RANGES: readonly [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  // IPv4-compatible (::a.b.c.d, deprecated), which also covers :: and ::1.
  ['::', 96, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001::', 32, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

const NON_PUBLIC = new BlockList();
for (const [network, prefix, type] of RANGES) NON_PUBLIC.addSubnet(network, prefix, type);

/** True for any address in the ranges above, and for anything that is not an IP address at all. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 0) return true;
  return NON_PUBLIC.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}
