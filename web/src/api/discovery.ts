import type { DiscoveryDocument } from './types.ts';

/**
 * Reads the instance's discovery document from the page's own origin (docs/conventions.md). The API and gateway
 * may live elsewhere; their bases come only from this document.
 */
export async function discover(origin = window.location.origin): Promise<DiscoveryDocument> {
  const response = await fetch(`${origin}/.well-known/service`, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`discovery answered ${response.status}`);
  return (await response.json()) as DiscoveryDocument;
}

/**
 * Whether the server says it cannot deliver email now (docs/deployment.md#email-delivery), read fresh after an
 * action that sent one. A failed read counts as "not failing": the page then says what it said before.
 */
export async function emailDeliveryFailing(origin = window.location.origin): Promise<boolean> {
  try {
    return (await discover(origin)).features.email_delivery === 'failing';
  } catch {
    return false;
  }
}
