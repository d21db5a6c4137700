import type { DiscoveryDocument } from './types.ts';

/**
 * Reads the instance's discovery document from the page's own origin (contract §4). The API and gateway
 * may live elsewhere; their bases come only from this document.
 */
export async function discover(origin = window.location.origin): Promise<DiscoveryDocument> {
  const response = await fetch(`${origin}/.well-known/service`, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`discovery answered ${response.status}`);
  return (await response.json()) as DiscoveryDocument;
}
