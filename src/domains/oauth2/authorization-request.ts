import { ApiError, fieldError } from '../../http/errors.ts';
import type { OAuthScope } from '../../http/route.ts';
import { parseSnowflake } from '../../platform/crypto/snowflake.ts';
import type { ApplicationRecord, ApplicationsRepository } from '../applications/applications-repository.ts';
import { CODE_CHALLENGE_FORM } from './pkce.ts';
import { parseScopes } from './scopes.ts';

/** The parameters of an authorisation request, as the authorize redirect and the consent API receive them. */
export interface AuthorizationInput {
  client_id: string;
  scope: string;
  redirect_uri?: string | undefined;
  state?: string | undefined;
  response_type?: string | undefined;
  permissions?: string | undefined;
  guild_id?: string | undefined;
  code_challenge?: string | undefined;
  code_challenge_method?: string | undefined;
}

export interface AuthorizationRequest {
  app: ApplicationRecord;
  scopes: OAuthScope[];
  /** Absent only for a bot-only installation without a code grant. */
  redirectUri: string | undefined;
  state: string | undefined;
  codeChallenge: string | null;
  /** Set when the `bot` scope is requested. */
  install: { guildId: string; permissions: bigint } | undefined;
}

/** Step 1: the client and its exactly registered redirect URI (errors here must never redirect). */
export async function resolveClient(
  apps: Pick<ApplicationsRepository, 'findById'>,
  input: Pick<AuthorizationInput, 'client_id'>,
): Promise<ApplicationRecord> {
  const id = parseSnowflake(input.client_id);
  if (!id.ok) throw fieldError('client_id', 'INVALID_SNOWFLAKE_FORMAT', 'Invalid client id');
  const app = await apps.findById(id.value);
  if (!app) throw new ApiError('UNKNOWN_APPLICATION');
  return app;
}

export function checkRedirectUri(app: ApplicationRecord, redirectUri: string | undefined): void {
  if (redirectUri !== undefined && !app.redirectUris.includes(redirectUri))
    throw fieldError('redirect_uri', 'INVALID_REDIRECT_URI', 'Redirect URI does not match a registered one');
}

/** Step 2: scopes, response type, PKCE and bot installation parameters. */
export function validateAuthorization(app: ApplicationRecord, input: AuthorizationInput): AuthorizationRequest {
  const parsed = parseScopes(input.scope);
  if (!parsed.ok) throw fieldError('scope', 'INVALID_SCOPE', 'Unknown or missing scope');
  const scopes = parsed.scopes;
  const wantsBot = scopes.includes('bot');
  if (wantsBot && !app.botUserId) throw fieldError('scope', 'INVALID_SCOPE', 'This application has no bot');

  if (input.response_type !== undefined && input.response_type !== 'code')
    throw fieldError('response_type', 'INVALID_FORMAT', 'Only response_type=code is supported');

  checkRedirectUri(app, input.redirect_uri);
  const botOnly = scopes.length === 1 && wantsBot;
  if (input.redirect_uri === undefined && (!botOnly || app.botRequireCodeGrant))
    throw fieldError('redirect_uri', 'BASE_TYPE_REQUIRED', 'A redirect URI is required');

  const method = input.code_challenge_method;
  const challenge = input.code_challenge;
  if (method !== undefined && method !== 'S256')
    throw fieldError('code_challenge_method', 'INVALID_FORMAT', 'Only S256 is supported');
  if (challenge !== undefined && method === undefined)
    throw fieldError('code_challenge_method', 'BASE_TYPE_REQUIRED', 'code_challenge_method must be S256');
  if (method !== undefined && challenge === undefined)
    throw fieldError('code_challenge', 'BASE_TYPE_REQUIRED', 'code_challenge is required');
  if (challenge !== undefined && !CODE_CHALLENGE_FORM.test(challenge))
    throw fieldError('code_challenge', 'INVALID_FORMAT', 'Expected a base64url SHA-256 challenge');

  let install: AuthorizationRequest['install'];
  if (wantsBot) {
    if (input.guild_id === undefined) throw fieldError('guild_id', 'BASE_TYPE_REQUIRED', 'Choose a guild');
    const guild = parseSnowflake(input.guild_id);
    if (!guild.ok)
      throw fieldError(
        'guild_id',
        guild.reason === 'range' ? 'SNOWFLAKE_OUT_OF_RANGE' : 'INVALID_SNOWFLAKE_FORMAT',
        'Invalid guild id',
      );
    const permissions = input.permissions ?? '0';
    if (!/^\d{1,20}$/.test(permissions) || BigInt(permissions) >= 1n << 63n)
      throw fieldError('permissions', 'INVALID_FORMAT', 'Permissions must be a decimal bitfield');
    install = { guildId: guild.value, permissions: BigInt(permissions) };
  }

  return {
    app,
    scopes,
    redirectUri: input.redirect_uri,
    state: input.state,
    codeChallenge: challenge ?? null,
    install,
  };
}

/** The client's redirect URI with the response parameters appended (its own query is kept). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
