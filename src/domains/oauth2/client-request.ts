import { parseSnowflake } from '../../platform/crypto/snowflake.ts';
import { constantTimeEqual, digest } from '../../platform/crypto/tokens.ts';
import type { ApplicationRecord, ApplicationsRepository } from '../applications/applications-repository.ts';
import { oauthError } from './oauth-errors.ts';

/** Parameters of a token, revocation or introspection request: one string per name. */
export type ClientParams = ReadonlyMap<string, string>;

/**
 * Reads the body of the client endpoints: form-encoded (RFC 6749) or, for convenience, a JSON object of
 * strings. A repeated parameter is `invalid_request` (RFC 6749 §3.2).
 */
export function parseClientParams(contentType: string | undefined, raw: unknown): ClientParams {
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : '';
  const params = new Map<string, string>();
  if ((contentType ?? '').toLowerCase().includes('json')) {
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      throw oauthError('invalid_request', 'The request body is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw oauthError('invalid_request', 'The request body must be an object');
    for (const [name, value] of Object.entries(parsed)) {
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string') throw oauthError('invalid_request', `Parameter ${name} must be a string`);
      params.set(name, value);
    }
    return params;
  }
  for (const [name, value] of new URLSearchParams(text)) {
    if (params.has(name)) throw oauthError('invalid_request', `Parameter ${name} is repeated`);
    params.set(name, value);
  }
  return params;
}

interface PresentedClient {
  clientId: string;
  /** Absent for a public client (`token_endpoint_auth_method` "none": `client_id` in the body alone). */
  clientSecret: string | undefined;
}

const BASIC = /^basic ([A-Za-z0-9+/]+={0,2})$/i;

/** RFC 6749 §2.3.1: Basic credentials are form-encoded before base64. */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

function presentedClient(authorization: string | undefined, params: ClientParams): PresentedClient {
  const bodyId = params.get('client_id');
  const bodySecret = params.get('client_secret');
  if (authorization !== undefined) {
    const match = BASIC.exec(authorization);
    if (!match) throw oauthError('invalid_client', 'Client authentication failed');
    if (bodySecret !== undefined)
      throw oauthError('invalid_request', 'Use one client authentication method, not several');
    const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const clientId = colon === -1 ? undefined : formDecode(decoded.slice(0, colon));
    const clientSecret = colon === -1 ? undefined : formDecode(decoded.slice(colon + 1));
    if (clientId === undefined || clientSecret === undefined || (bodyId !== undefined && bodyId !== clientId))
      throw oauthError('invalid_client', 'Client authentication failed');
    return { clientId, clientSecret };
  }
  if (bodyId === undefined) throw oauthError('invalid_client', 'Client authentication failed');
  return { clientId: bodyId, clientSecret: bodySecret };
}

/** A placeholder digest so that an unknown client costs the same comparison as a known one. */
const NO_CLIENT_DIGEST = digest('no such client');

export interface AuthenticatedClient {
  app: ApplicationRecord;
  /** `none`: a public client identified by `client_id` alone (it must prove the code with PKCE). */
  method: 'secret' | 'none';
}

/**
 * Client authentication by HTTP Basic or by `client_id` + `client_secret` in the body; a public client
 * (`public_client`) may send its `client_id` alone where `allowPublic` (token and revocation endpoints).
 * Every failure is the same `invalid_client`; the secret is compared as a digest in constant time.
 */
export async function authenticateClient(
  apps: Pick<ApplicationsRepository, 'findById'>,
  authorization: string | undefined,
  params: ClientParams,
  options: { allowPublic: boolean },
): Promise<AuthenticatedClient> {
  const presented = presentedClient(authorization, params);
  const id = parseSnowflake(presented.clientId);
  const app = id.ok ? await apps.findById(id.value) : undefined;
  if (presented.clientSecret === undefined) {
    if (!app?.publicClient || !options.allowPublic) throw oauthError('invalid_client', 'Client authentication failed');
    return { app, method: 'none' };
  }
  const secretOk = constantTimeEqual(digest(presented.clientSecret), app?.clientSecretHash ?? NO_CLIENT_DIGEST);
  if (!app || !secretOk) throw oauthError('invalid_client', 'Client authentication failed');
  return { app, method: 'secret' };
}
