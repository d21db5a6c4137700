/** Wire shapes the client reads (docs/accounts.md, docs/mfa-and-sudo.md, docs/oauth2.md, api.md). */

export type Snowflake = string;

export interface PartialUser {
  id: Snowflake;
  username: string;
  discriminator: string;
  global_name: string | null;
  avatar: string | null;
  bot?: boolean;
  flags?: number;
}

export interface PrivateUser extends PartialUser {
  email?: string | null;
  verified?: boolean;
  mfa_enabled: boolean;
  authenticator_types: number[];
  locale?: string | null;
  acls?: string[];
  bio?: string | null;
  pronouns?: string | null;
  accent_color?: number | null;
  banner?: string | null;
  pending_manual_verification?: boolean;
}

/** "TR" in api.md: what every successful sign-in answers. */
export interface TokenResponse {
  token: string;
  user_id: Snowflake;
  user?: PrivateUser;
}

export interface MfaChallenge {
  mfa: true;
  ticket: string;
  allowed_methods?: string[];
  totp: boolean;
  webauthn: boolean;
  sms: boolean;
}

export type LoginResult = TokenResponse | MfaChallenge;

export function isMfaChallenge(result: LoginResult): result is MfaChallenge {
  return (result as MfaChallenge).mfa === true;
}

export interface RegistrationPending {
  registration_pending_approval: true;
  user_id: Snowflake;
}

export interface SsoStatus {
  enabled: boolean;
  enforced: boolean;
  display_name: string | null;
  redirect_uri: string | null;
}

export interface CaptchaConfig {
  provider: 'none' | 'hcaptcha' | 'turnstile';
  hcaptcha_site_key: string | null;
  turnstile_site_key: string | null;
}

export interface DiscoveryDocument {
  endpoints: { api_client: string; gateway: string; media: string; webapp: string };
  captcha: CaptchaConfig;
  features: { emails_enabled: boolean };
  sso: SsoStatus;
  registration: { mode: 'open' | 'approval' | 'closed' };
  app_public: { branding: { product_name: string }; legal: { terms_url: string | null; privacy_url: string | null } };
}

export interface SudoMethods {
  totp: boolean;
  webauthn: boolean;
  password?: boolean;
  sso?: boolean;
}

/** The proof fields a sudo-gated request carries in its body (api.md §4). */
export interface SudoProof {
  password?: string;
  mfa_method?: 'totp' | 'webauthn';
  mfa_code?: string;
  webauthn_response?: unknown;
  webauthn_challenge?: string;
}

export interface SessionInfo {
  id_hash: string;
  client_info: { os?: string | null; platform?: string | null; location?: string | null } | null;
  masked_ip?: string | null;
  approx_last_used_at: string | null;
  current?: boolean;
}

export interface PublicApplication {
  id: Snowflake;
  name: string;
  icon: string | null;
  description: string | null;
  redirect_uris: string[];
  bot_public: boolean;
  bot: PartialUser | null;
  current_user?: PartialUser | null;
}

export interface UserGuild {
  id: Snowflake;
  name: string;
  icon: string | null;
  owner: boolean;
  permissions: string;
}
