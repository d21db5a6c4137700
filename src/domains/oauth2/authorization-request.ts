import { ApiError, fieldError } from '../../http/errors.ts';
import { snowflakeErrorCode } from '../../http/fields.ts';
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
  /** OpenID Connect: echoed in the ID token. */
  nonce?: string | undefined;
  /** OpenID Connect: space-separated `none`, `login`, `consent`, `select_account`. */
  prompt?: string | undefined;
  /** OpenID Connect: the oldest sign-in (seconds ago) the client accepts, as a decimal string. */
  max_age?: string | undefined;
}

export type Prompt = 'none' | 'login' | 'consent' | 'select_account';
const PROMPTS: readonly string[] = ['none', 'login', 'consent', 'select_account'];
/** Longest nonce kept with a code. */
export const MAX_NONCE_LENGTH = 512;

export interface AuthorizationRequest {
  app: ApplicationRecord;
  scopes: OAuthScope[];
  /** Absent only for a bot-only installation without a code grant. */
  redirectUri: string | undefined;
  state: string | undefined;
  codeChallenge: string | null;
  nonce: string | null;
  prompts: ReadonlySet<Prompt>;
  /** Seconds; undefined when not asked for. */
  maxAge: number | undefined;
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
  // A public client has no secret: PKCE is what binds the code to it (a bot-only install issues no code).
  if (app.publicClient && challenge === undefined && input.redirect_uri !== undefined)
    throw fieldError('code_challenge', 'BASE_TYPE_REQUIRED', 'A public client must use PKCE (S256)');

  const prompts = parsePrompt(input.prompt);
  const maxAge = input.max_age;
  if (maxAge !== undefined && !/^\d{1,9}$/.test(maxAge))
    throw fieldError('max_age', 'INVALID_FORMAT', 'max_age must be a whole number of seconds');
  const nonce = input.nonce;
  // The nonce is stored with the code; a NUL cannot be (docs/conventions.md#errors).
  if (nonce !== undefined && (nonce === '' || nonce.length > MAX_NONCE_LENGTH || nonce.includes('\u0000')))
    throw fieldError('nonce', 'INVALID_FORMAT', `nonce must have 1 to ${MAX_NONCE_LENGTH} characters, without NUL`);

  let install: AuthorizationRequest['install'];
  if (wantsBot) {
    if (input.guild_id === undefined) throw fieldError('guild_id', 'BASE_TYPE_REQUIRED', 'Choose a guild');
    const guild = parseSnowflake(input.guild_id);
    if (!guild.ok) throw fieldError('guild_id', snowflakeErrorCode(guild.reason), 'Invalid guild id');
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
    nonce: nonce ?? null,
    prompts,
    maxAge: maxAge === undefined ? undefined : Number(maxAge),
    install,
  };
}

/** `prompt` values (OpenID Connect Core §3.1.2.1): known names only, and `none` alone. */
function parsePrompt(raw: string | undefined): ReadonlySet<Prompt> {
  const names = (raw ?? '').split(' ').filter((name) => name !== '');
  const prompts = new Set<Prompt>();
  for (const name of names) {
    if (!PROMPTS.includes(name)) throw fieldError('prompt', 'INVALID_FORMAT', `Unknown prompt ${name}`);
    prompts.add(name as Prompt);
  }
  if (prompts.has('none') && prompts.size > 1)
    throw fieldError('prompt', 'INVALID_FORMAT', 'prompt=none cannot be combined with other values');
  return prompts;
}

/** The client's redirect URI with the response parameters appended (its own query is kept). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
