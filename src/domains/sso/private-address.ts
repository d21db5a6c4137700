import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { anyCidrContains, parseCidrList } from '../../platform/net/cidr.ts';

/**
 * Ranges an identity-provider URL must not point at unless the operator opted in: a configurable issuer
 * would otherwise let an admin (or a stolen admin credential) make the server probe its own network.
 */
const NON_PUBLIC = parseCidrList(
  [
    '0.0.0.0/8',
    '10.0.0.0/8',
    '100.64.0.0/10',
    '127.0.0.0/8',
    '169.254.0.0/16',
    '172.16.0.0/12',
    '192.0.0.0/24',
    '192.168.0.0/16',
    '198.18.0.0/15',
    '224.0.0.0/4',
    '240.0.0.0/4',
    '::/128',
    '::1/128',
    '64:ff9b::/96',
    'fc00::/7',
    'fe80::/10',
    'ff00::/8',
  ].join(','),
);

/** True for loopback, private, link-local, carrier-grade NAT, multicast and reserved addresses. */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIP(bare) === 0) return true;
  return anyCidrContains(NON_PUBLIC, bare);
}

export type HostResolver = (hostname: string) => Promise<string[]>;

export const resolveHost: HostResolver = async (hostname) => {
  const results = await lookup(hostname, { all: true, verbatim: true });
  return results.map((result) => result.address);
};

/**
 * Addresses of a URL's host: the literal for IP hosts, otherwise every DNS answer. `undefined` when the
 * name does not resolve (the request-time guard still refuses it then, see `guarded-fetch.ts`).
 */
export async function hostAddresses(url: URL, resolver: HostResolver = resolveHost): Promise<string[] | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return [host];
  if (host === 'localhost' || host.endsWith('.localhost')) return ['127.0.0.1'];
  try {
    const addresses = await resolver(host);
    return addresses.length > 0 ? addresses : undefined;
  } catch {
    return undefined;
  }
}
