import { isIP } from 'node:net';
import { anyCidrContains, type Cidr } from '../platform/net/cidr.ts';

/**
 * The client address: the socket peer, or, when the peer is a trusted proxy, the right-most
 * `X-Forwarded-For` hop that is not itself trusted. A missing or garbled header is never an error.
 */
export function clientIp(
  socketAddress: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: readonly Cidr[],
): string {
  const peer = normalise(socketAddress ?? '0.0.0.0');
  if (trusted.length === 0 || !anyCidrContains(trusted, peer) || forwardedFor === undefined) return peer;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((hop) => normalise(hop.trim()))
    .filter((hop) => isIP(hop) !== 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    if (!anyCidrContains(trusted, hop)) return hop;
  }
  return hops[0] ?? peer;
}

function normalise(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
