/** Wire shapes the client reads (docs/accounts.md, docs/mfa-and-sudo.md, docs/oauth2.md, docs/api-reference.md). */

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

/** The token response (docs/accounts.md): what every successful sign-in answers. */
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
  /** `email_delivery`: `failing` while the server cannot hand email to its SMTP server. */
  features: { emails_enabled: boolean; email_delivery?: 'ok' | 'failing' | 'disabled' };
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

/** The proof fields a sudo-gated request carries in its body (docs/mfa-and-sudo.md#sudo-mode). */
export interface SudoProof {
  password?: string;
  mfa_method?: 'totp' | 'webauthn';
  mfa_code?: string;
  webauthn_response?: unknown;
  webauthn_challenge?: string;
}

/** A data export (docs/accounts.md#your-data-data-export). */
export interface Harvest {
  harvest_id: string;
  user_id: string;
  status: 'pending' | 'running' | 'completed' | 'failed';
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  size_bytes: number | null;
  link_expires_at: string | null;
  downloaded: boolean;
  next_request_at: string | null;
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
  /** The scopes this server lets the application ask for. */
  scopes?: string[];
  bot_public: boolean;
  bot: PartialUser | null;
  current_user?: PartialUser | null;
}

/** Who may send the account a friend request (docs/accounts.md#privacy); `{}` is nobody. */
export interface FriendSourceFlags {
  all?: boolean;
  mutual_friends?: boolean;
  mutual_guilds?: boolean;
}

/** The privacy members of `GET /users/@me/settings` (the object carries many more). */
export interface PrivacySettings {
  restricted_guilds: Snowflake[];
  default_guilds_restricted: boolean;
  friend_source_flags: FriendSourceFlags;
}

export interface UserGuild {
  id: Snowflake;
  name: string;
  icon: string | null;
  owner: boolean;
  permissions: string;
}

/** A bot user inside an application (docs/oauth2.md#applications); `token` only in create and reset answers. */
export interface ApplicationBot {
  id: Snowflake;
  username: string;
  discriminator: string;
  avatar: string | null;
  banner: string | null;
  bio: string | null;
  token?: string;
  flags: number;
}

/** The owner's view of an application; `client_secret` only right after it is minted. */
export interface Application {
  id: Snowflake;
  name: string;
  redirect_uris: string[];
  bot_public: boolean;
  bot_require_code_grant: boolean;
  public_client?: boolean;
  client_secret?: string;
  bot?: ApplicationBot;
}

/** The Admin API's user (docs/admin.md). */
export interface AdminUser extends Omit<PartialUser, 'flags'> {
  /** A decimal string (the bits pass 2^31). */
  flags: string;
  email: string | null;
  email_verified: boolean;
  suspicious_activity_flags: number;
  temp_banned_until: string | null;
  pending_deletion_at: string | null;
  acls: string[];
  authenticator_types: number[];
  last_active_at: string | null;
  last_active_ip: string | null;
}

export interface AdminSession {
  id_hash: string;
  client_info: { os?: string | null; platform?: string | null; location?: string | null } | null;
  ip: string | null;
  created_at: string;
  last_used_at: string;
}

export interface IpBan {
  ip: string;
  kind: 'manual' | 'automatic';
  expires_at: string | null;
}

/** A report's reason (docs/safety.md). */
export type ReportCategory = 'spam' | 'harassment' | 'illegal_content' | 'other';
export const REPORT_CATEGORIES: readonly ReportCategory[] = ['spam', 'harassment', 'illegal_content', 'other'];
export type ReportStatus = 'open' | 'resolved' | 'dismissed';

/** A report as the Admin API shows it (docs/admin.md#reports). */
export interface AdminReport {
  id: Snowflake;
  target_type: 'message' | 'user' | 'guild';
  target_id: Snowflake;
  channel_id: Snowflake | null;
  guild_id: Snowflake | null;
  category: ReportCategory;
  description: string | null;
  status: ReportStatus;
  created_at: string;
  reporter_id: Snowflake;
  reporter: { id: Snowflake; username: string; global_name: string | null; avatar?: string | null } | null;
  snapshot: Record<string, unknown>;
  closed_at: string | null;
  closed_by: Snowflake | null;
  resolution_note: string | null;
}

export interface AuditEntry {
  log_id: Snowflake;
  admin_user_id: Snowflake;
  credential_kind: 'session' | 'bearer' | 'admin_api_key';
  api_key_id?: Snowflake | null;
  action: string;
  target_type: string;
  target_id: string;
  audit_log_reason: string | null;
  metadata: Record<string, unknown> | null;
  before?: unknown;
  after?: unknown;
  created_at: string;
}

export interface AuditQuery {
  admin_user_id?: string;
  target_type?: string;
  target_id?: string;
  action?: string;
  before?: string;
  limit?: number;
}

export interface AdminApiKey {
  key_id: Snowflake;
  name: string;
  acls: string[];
  created_by_user_id: Snowflake;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
}

export interface SsoSettingsView {
  enabled: boolean;
  enforced: boolean;
  display_name: string;
  issuer: string | null;
  authorization_url: string | null;
  token_url: string | null;
  userinfo_url: string | null;
  jwks_url: string | null;
  client_id: string | null;
  client_secret_set: boolean;
  scope: string;
  allowed_domains: string[];
  auto_provision: boolean;
  link_by_email: boolean;
  allow_private_issuer?: boolean;
  redirect_uri: string | null;
}

/** What "Test the connection" learned about the SSO provider (docs/sso.md#testing-the-connection). */
export type SsoCheck =
  | {
      ok: true;
      issuer: string;
      authorization_endpoint: string;
      token_endpoint: string;
      userinfo_endpoint: string | null;
      jwks_keys: number;
    }
  | { ok: false; step: 'settings' | 'discovery' | 'jwks'; reason: string };

export interface InstanceConfig {
  sso: SsoSettingsView;
  registration: { mode: 'open' | 'approval' | 'closed' };
  captcha: unknown;
  email: {
    enabled: boolean;
    delivery: {
      status: 'ok' | 'failing' | 'disabled';
      failing_since: string | null;
      last_error: string | null;
      failed_deliveries: number;
    };
  };
  ip_authorization: { enabled: boolean };
}

export interface BackupCode {
  code: string;
  consumed: boolean;
}

export interface EmailChangeStart {
  ticket: string;
  /** A code went to the current (verified) address; otherwise `original_proof` is given at once. */
  require_original: boolean;
  original_proof?: string;
  resend_available_at?: string;
}

export interface AuthorizedApp {
  application: { id: Snowflake; name: string; icon: string | null; description: string | null };
  scopes: string[];
  authorized_at: string;
}

export interface WebauthnCredential {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}
