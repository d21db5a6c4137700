import type { OAuthScope } from '../../http/route.ts';

/**
 * The closed set of scopes (docs/oauth2.md#oauth2-provider), in their canonical order. `openid` asks for an ID token (OpenID
 * Connect) and `profile` for the name claims; they come last so that earlier scope strings keep their form.
 */
export const OAUTH_SCOPES: readonly OAuthScope[] = [
  'identify',
  'email',
  'guilds',
  'connections',
  'bot',
  'openid',
  'profile',
];

export type ScopeParse = { ok: true; scopes: OAuthScope[] } | { ok: false; reason: 'empty' | 'unknown' };

/** Splits a scope parameter on spaces or `+`; unknown names fail, duplicates collapse, order is canonical. */
export function parseScopes(raw: string): ScopeParse {
  const names = raw.split(/[\s+]+/).filter((name) => name !== '');
  if (names.length === 0) return { ok: false, reason: 'empty' };
  const wanted = new Set<string>();
  for (const name of names) {
    if (!(OAUTH_SCOPES as readonly string[]).includes(name)) return { ok: false, reason: 'unknown' };
    wanted.add(name);
  }
  return { ok: true, scopes: OAUTH_SCOPES.filter((scope) => wanted.has(scope)) };
}

export function formatScopes(scopes: readonly string[]): string {
  return scopes.join(' ');
}

export function covers(held: readonly string[], wanted: readonly string[]): boolean {
  return wanted.every((scope) => held.includes(scope));
}

/** Canonical union of two scope lists. */
export function unionScopes(a: readonly string[], b: readonly string[]): OAuthScope[] {
  return OAUTH_SCOPES.filter((scope) => a.includes(scope) || b.includes(scope));
}
