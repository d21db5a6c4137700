import { compactVerify, createLocalJWKSet } from 'jose';
import { parseSnowflake } from '../../platform/crypto/snowflake.ts';
import type { ApplicationRecord, ApplicationsRepository } from '../applications/applications-repository.ts';
import { redirectWith } from './authorization-request.ts';
import { oauthError } from './oauth-errors.ts';
import type { SigningKeys } from './signing-keys.ts';

/** The parameters of an RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2). */
export interface LogoutInput {
  id_token_hint?: string | undefined;
  client_id?: string | undefined;
  post_logout_redirect_uri?: string | undefined;
  state?: string | undefined;
}

export interface LogoutRequest {
  /** The relying party, from the hint's `aud` or `client_id`; absent when neither was sent. */
  app: ApplicationRecord | undefined;
  /** The account the hint names (`sub`), if a hint was sent. */
  subject: string | undefined;
  /** Where to send the user afterwards, with `state`: only a URI registered for `app`. */
  redirectTo: string | undefined;
}

const MAX_HINT_LENGTH = 8192;

/**
 * Checks a logout request before anything happens, and again when the user confirms: an `id_token_hint` must
 * be an ID token this server signed (its signature against the published keys and its `iss`; an expired one
 * is accepted, as the specification allows, since logging out is what the user wants); a `client_id` must
 * match the hint's audience; a `post_logout_redirect_uri` needs the client (from the hint or `client_id`) and
 * must be exactly one of its registered redirect URIs. Every refusal is 400 `invalid_request` and never
 * redirects (docs/oauth2.md#rp-initiated-logout).
 */
export async function validateLogout(
  deps: { apps: Pick<ApplicationsRepository, 'findById'>; keys: SigningKeys; issuer: string },
  input: LogoutInput,
  now: number,
): Promise<LogoutRequest> {
  let subject: string | undefined;
  let audience: string | undefined;
  if (input.id_token_hint !== undefined) {
    const claims = await verifyHint(deps, input.id_token_hint, now);
    subject = claims.sub;
    audience = claims.aud;
  }
  let clientId = audience;
  if (input.client_id !== undefined) {
    if (audience !== undefined && input.client_id !== audience)
      throw oauthError('invalid_request', 'client_id does not match the id_token_hint');
    clientId = input.client_id;
  }
  let app: ApplicationRecord | undefined;
  if (clientId !== undefined) {
    const id = parseSnowflake(clientId);
    app = id.ok ? await deps.apps.findById(id.value) : undefined;
    if (!app) throw oauthError('invalid_request', 'Unknown client');
  }
  let redirectTo: string | undefined;
  const uri = input.post_logout_redirect_uri;
  if (uri !== undefined) {
    if (!app) throw oauthError('invalid_request', 'post_logout_redirect_uri needs id_token_hint or client_id');
    if (!app.redirectUris.includes(uri))
      throw oauthError('invalid_request', 'post_logout_redirect_uri is not a registered redirect URI of the client');
    redirectTo = redirectWith(uri, { state: input.state });
  }
  return { app, subject, redirectTo };
}

async function verifyHint(
  deps: { keys: SigningKeys; issuer: string },
  token: string,
  now: number,
): Promise<{ sub: string; aud: string }> {
  const invalid = () => oauthError('invalid_request', 'id_token_hint is not an ID token issued here');
  if (token.length > MAX_HINT_LENGTH) throw invalid();
  let payload: Record<string, unknown>;
  try {
    const verified = await compactVerify(token, createLocalJWKSet(await deps.keys.jwks(now)), {
      algorithms: ['ES256'],
    });
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as Record<string, unknown>;
  } catch {
    throw invalid();
  }
  if (payload.iss !== deps.issuer || typeof payload.sub !== 'string' || typeof payload.aud !== 'string')
    throw invalid();
  return { sub: payload.sub, aud: payload.aud };
}
