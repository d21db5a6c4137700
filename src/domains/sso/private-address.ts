import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isNonPublicAddress } from '../../platform/net/non-public.ts';

/**
 * An identity-provider URL must not point at a non-public address unless the operator opted in: a
 * configurable issuer would otherwise let an admin (or a stolen admin credential) make the server probe its
 * own network. The ranges are the outbound guard's (`platform/net/non-public.ts`).
 */
export { isNonPublicAddress };

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
