import { HttpClient } from './http.ts';
import type {
  AdminApiKey,
  AdminReport,
  AdminSession,
  AdminUser,
  Application,
  ApplicationBot,
  AuditEntry,
  AuditQuery,
  AuthorizedApp,
  BackupCode,
  EmailChangeStart,
  Harvest,
  InstanceConfig,
  IpBan,
  LoginResult,
  PrivacySettings,
  PrivateUser,
  PublicApplication,
  RegistrationPending,
  SessionInfo,
  SsoCheck,
  SsoStatus,
  SudoMethods,
  SudoProof,
  TokenResponse,
  UserGuild,
  WebauthnCredential,
} from './types.ts';

export interface CaptchaAnswer {
  token: string;
  type: string;
}

function captchaHeaders(captcha?: CaptchaAnswer): Record<string, string> {
  return captcha ? { 'X-Captcha-Token': captcha.token, 'X-Captcha-Type': captcha.type } : {};
}

export interface ConsentRequest {
  client_id: string;
  scope: string;
  redirect_uri?: string;
  state?: string;
  response_type?: string;
  permissions?: string;
  guild_id?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

/** The typed API: one method per route the web client calls, grouped by area. */
export class HearthApi {
  readonly http: HttpClient;

  constructor(base: string, token: () => string | null, onSessionRejected?: (token: string) => void) {
    this.http = new HttpClient(base, token, onSessionRejected);
  }

  readonly auth = {
    login: (email: string, password: string, captcha?: CaptchaAnswer) =>
      this.http.request<LoginResult>('POST', '/auth/login', {
        body: { email, password },
        auth: false,
        headers: captchaHeaders(captcha),
      }),
    mfaTotp: (ticket: string, code: string) =>
      this.http.request<TokenResponse>('POST', '/auth/login/mfa/totp', { body: { ticket, code }, auth: false }),
    mfaWebauthnOptions: (ticket: string) =>
      this.http.request<unknown>('POST', '/auth/login/mfa/webauthn/authentication-options', {
        body: { ticket },
        auth: false,
      }),
    mfaWebauthn: (ticket: string, response: unknown, challenge: string) =>
      this.http.request<TokenResponse>('POST', '/auth/login/mfa/webauthn', {
        body: { ticket, response, challenge },
        auth: false,
      }),
    passkeyOptions: () =>
      this.http.request<unknown>('POST', '/auth/webauthn/authentication-options', { body: {}, auth: false }),
    passkey: (response: unknown, challenge: string) =>
      this.http.request<TokenResponse>('POST', '/auth/webauthn/authenticate', {
        body: { response, challenge },
        auth: false,
      }),
    register: (
      body: { email: string; username: string; global_name?: string; password: string; consent: boolean },
      captcha?: CaptchaAnswer,
    ) =>
      this.http.request<TokenResponse | RegistrationPending>('POST', '/auth/register', {
        body,
        auth: false,
        headers: captchaHeaders(captcha),
      }),
    logout: () => this.http.request<void>('POST', '/auth/logout', { body: {} }),
    sessions: () => this.http.request<SessionInfo[]>('GET', '/auth/sessions'),
    logoutSessions: (hashes: string[], proof: SudoProof = {}) =>
      this.http.request<void>('POST', '/auth/sessions/logout', { body: { session_id_hashes: hashes, ...proof } }),
    verify: (token: string) => this.http.request<void>('POST', '/auth/verify', { body: { token }, auth: false }),
    resendVerification: () => this.http.request<void>('POST', '/auth/verify/resend', { body: {} }),
    forgot: (email: string, captcha?: CaptchaAnswer) =>
      this.http.request<void>('POST', '/auth/forgot', {
        body: { email },
        auth: false,
        headers: captchaHeaders(captcha),
      }),
    resetValid: (token: string) =>
      this.http.request<{ valid: boolean }>('GET', `/auth/reset/${encodeURIComponent(token)}`, { auth: false }),
    reset: (token: string, password: string) =>
      this.http.request<LoginResult>('POST', '/auth/reset', { body: { token, password }, auth: false }),
    emailRevert: (token: string, password: string) =>
      this.http.request<TokenResponse>('POST', '/auth/email-revert', { body: { token, password }, auth: false }),
    authorizeIp: (token: string) =>
      this.http.request<void>('POST', '/auth/authorize-ip', { body: { token }, auth: false }),
    ipAuthorizationResend: (ticket: string) =>
      this.http.request<void>('POST', '/auth/ip-authorization/resend', { body: { ticket }, auth: false }),
    ipAuthorizationPoll: (ticket: string, signal?: AbortSignal) =>
      this.http.request<{ completed: false } | ({ completed: true } & TokenResponse)>(
        'GET',
        '/auth/ip-authorization/poll',
        { query: { ticket }, auth: false, signal },
      ),
    ssoStatus: () => this.http.request<SsoStatus>('GET', '/auth/sso/status', { auth: false }),
    ssoStart: (redirectTo?: string) =>
      this.http.request<{ authorization_url: string; state: string }>('POST', '/auth/sso/start', {
        body: redirectTo ? { redirect_to: redirectTo } : {},
        auth: false,
      }),
    ssoComplete: (code: string, state: string) =>
      this.http.request<TokenResponse & { redirect_to?: string | null }>('POST', '/auth/sso/complete', {
        body: { code, state },
        auth: false,
      }),
  };

  readonly users = {
    me: () => this.http.request<PrivateUser>('GET', '/users/@me'),
    update: (changes: Record<string, unknown>) =>
      this.http.request<PrivateUser & { token?: string }>('PATCH', '/users/@me', { body: changes }),
    settings: () => this.http.request<PrivacySettings & Record<string, unknown>>('GET', '/users/@me/settings'),
    updateSettings: (changes: Record<string, unknown>) =>
      this.http.request<PrivacySettings & Record<string, unknown>>('PATCH', '/users/@me/settings', { body: changes }),
    guilds: () => this.http.request<UserGuild[]>('GET', '/users/@me/guilds'),
    sudoMethods: () => this.http.request<SudoMethods & { has_mfa: boolean }>('GET', '/users/@me/sudo/mfa-methods'),
    sudoWebauthnOptions: () =>
      this.http.request<unknown>('POST', '/users/@me/sudo/webauthn/authentication-options', { body: {} }),
    /** The newest data export, or null; `requestHarvest` asks for one (once a day). */
    harvest: () => this.http.request<Harvest | null>('GET', '/users/@me/harvest'),
    requestHarvest: () => this.http.request<Harvest>('POST', '/users/@me/harvest'),
    /** Ends every session; the next correct password sign-in turns the account back on. */
    disable: (proof: SudoProof = {}) => this.http.request<void>('POST', '/users/@me/disable', { body: proof }),
    /** Schedules the deletion (cancelled by signing in again before it happens) and ends every session. */
    delete: (proof: SudoProof = {}) => this.http.request<void>('POST', '/users/@me/delete', { body: proof }),
  };

  /** The email-change steps (docs/accounts.md): every one but the resends is sudo-gated. */
  readonly emailChange = {
    start: (proof: SudoProof = {}) =>
      this.http.request<EmailChangeStart>('POST', '/users/@me/email-change/start', { body: proof }),
    verifyOriginal: (ticket: string, code: string, proof: SudoProof = {}) =>
      this.http.request<{ original_proof: string }>('POST', '/users/@me/email-change/verify-original', {
        body: { ticket, code, ...proof },
      }),
    requestNew: (ticket: string, newEmail: string, originalProof: string, proof: SudoProof = {}) =>
      this.http.request<{ ticket: string; new_email: string; new_code_expires_at: string }>(
        'POST',
        '/users/@me/email-change/request-new',
        { body: { ticket, new_email: newEmail, original_proof: originalProof, ...proof } },
      ),
    verifyNew: (ticket: string, code: string, originalProof: string, proof: SudoProof = {}) =>
      this.http.request<{ email_token: string }>('POST', '/users/@me/email-change/verify-new', {
        body: { ticket, code, original_proof: originalProof, ...proof },
      }),
    resendOriginal: (ticket: string) =>
      this.http.request<void>('POST', '/users/@me/email-change/resend-original', { body: { ticket } }),
    resendNew: (ticket: string) =>
      this.http.request<void>('POST', '/users/@me/email-change/resend-new', { body: { ticket } }),
    /** The last step: the new address becomes the account's (sudo). */
    apply: (emailToken: string, proof: SudoProof = {}) =>
      this.http.request<PrivateUser>('PATCH', '/users/@me', { body: { email_token: emailToken, ...proof } }),
  };

  readonly mfa = {
    webauthnCredentials: () => this.http.request<WebauthnCredential[]>('GET', '/users/@me/mfa/webauthn/credentials'),
    webauthnRegistrationOptions: (proof: SudoProof = {}) =>
      this.http.request<unknown>('POST', '/users/@me/mfa/webauthn/credentials/registration-options', { body: proof }),
    addWebauthnCredential: (response: unknown, challenge: string, name: string) =>
      this.http.request<void>('POST', '/users/@me/mfa/webauthn/credentials', { body: { response, challenge, name } }),
    renameWebauthnCredential: (id: string, name: string, proof: SudoProof = {}) =>
      this.http.request<void>('PATCH', `/users/@me/mfa/webauthn/credentials/${encodeURIComponent(id)}`, {
        body: { name, ...proof },
      }),
    removeWebauthnCredential: (id: string, proof: SudoProof = {}) =>
      this.http.request<void>('DELETE', `/users/@me/mfa/webauthn/credentials/${encodeURIComponent(id)}`, {
        body: proof,
      }),
    /** `secret` is made by the client (base32); `code` proves the authenticator app holds it. */
    enableTotp: (secret: string, code: string, proof: SudoProof = {}) =>
      this.http.request<{ backup_codes: BackupCode[] }>('POST', '/users/@me/mfa/totp/enable', {
        body: { secret, code, ...proof },
      }),
    disableTotp: (proof: SudoProof = {}) =>
      this.http.request<void>('POST', '/users/@me/mfa/totp/disable', { body: proof }),
    /** The current set (with `consumed` flags), or a fresh one with `regenerate`. */
    backupCodes: (regenerate: boolean, proof: SudoProof = {}) =>
      this.http.request<{ backup_codes: BackupCode[] }>('POST', '/users/@me/mfa/backup-codes', {
        body: { regenerate, ...proof },
      }),
  };

  readonly oauth2 = {
    application: (id: string) =>
      this.http.request<PublicApplication>('GET', `/oauth2/applications/${encodeURIComponent(id)}/public`),
    consent: (request: ConsentRequest) =>
      this.http.request<{ redirect_to: string }>('POST', '/oauth2/authorize/consent', { body: request }),
    /** Confirms an RP-initiated logout: ends this session (when there is one) and names where to go. */
    logout: (request: Record<string, string>) =>
      this.http.request<{ signed_out: boolean; redirect_to: string | null }>('POST', '/oauth2/logout/confirm', {
        body: request,
      }),
    /** The applications this account authorised, with their scopes. */
    authorizations: () => this.http.request<AuthorizedApp[]>('GET', '/oauth2/@me/authorizations'),
    /** Revokes the grant and every token issued under it. */
    revokeAuthorization: (applicationId: string) =>
      this.http.request<void>('DELETE', `/oauth2/@me/authorizations/${encodeURIComponent(applicationId)}`),
  };
  /** The developer portal: the caller's applications and their bots (docs/oauth2.md#applications). */
  readonly applications = {
    list: () => this.http.request<Application[]>('GET', '/users/@me/applications'),
    create: (name: string) => this.http.request<Application>('POST', '/oauth2/applications', { body: { name } }),
    get: (id: string) => this.http.request<Application>('GET', `/oauth2/applications/${encodeURIComponent(id)}`),
    update: (id: string, changes: { name?: string; redirect_uris?: string[]; public_client?: boolean }) =>
      this.http.request<Application>('PATCH', `/oauth2/applications/${encodeURIComponent(id)}`, { body: changes }),
    remove: (id: string, proof: SudoProof = {}) =>
      this.http.request<void>('DELETE', `/oauth2/applications/${encodeURIComponent(id)}`, { body: proof }),
    resetSecret: (id: string, proof: SudoProof = {}) =>
      this.http.request<Application>('POST', `/oauth2/applications/${encodeURIComponent(id)}/client-secret/reset`, {
        body: proof,
      }),
    resetBotToken: (id: string, proof: SudoProof = {}) =>
      this.http.request<{ token: string; bot: ApplicationBot }>(
        'POST',
        `/oauth2/applications/${encodeURIComponent(id)}/bot/reset-token`,
        { body: proof },
      ),
    updateBot: (id: string, changes: { username?: string; avatar?: string | null }) =>
      this.http.request<ApplicationBot>('PATCH', `/oauth2/applications/${encodeURIComponent(id)}/bot`, {
        body: changes,
      }),
  };

  /** The Admin API with the session token (docs/admin.md#credentials-and-checks, docs/admin.md). */
  readonly admin = {
    me: () => this.http.request<{ user: AdminUser; acls: string[] }>('GET', '/admin/users/me'),
    lookup: (query: string) =>
      this.http.request<{ users: AdminUser[] }>('POST', '/admin/users/lookup', { body: { query } }),
    updateFlags: (userId: string, change: { add_flags?: string; remove_flags?: string }) =>
      this.http.request<{ user: AdminUser }>('POST', '/admin/users/update-flags', {
        body: { user_id: userId, ...change },
      }),
    setAcls: (userId: string, acls: string[]) =>
      this.http.request<{ success: true }>('POST', '/admin/users/set-acls', { body: { user_id: userId, acls } }),
    scheduleDeletion: (userId: string, reasonCode: number, days: number) =>
      this.http.request<{ success: true }>('POST', '/admin/users/schedule-deletion', {
        body: { user_id: userId, reason_code: reasonCode, days_until_deletion: days },
      }),
    cancelDeletion: (userId: string) =>
      this.http.request<{ success: true }>('POST', '/admin/users/cancel-deletion', { body: { user_id: userId } }),
    disableMfa: (userId: string) =>
      this.http.request<{ success: true }>('POST', '/admin/users/disable-mfa', { body: { user_id: userId } }),
    listSessions: (userId: string) =>
      this.http.request<{ sessions: AdminSession[] }>('POST', '/admin/users/list-sessions', {
        body: { user_id: userId },
      }),
    terminateSessions: (userId: string) =>
      this.http.request<{ success: true }>('POST', '/admin/users/terminate-sessions', { body: { user_id: userId } }),
    ipBans: () => this.http.request<{ bans: IpBan[] }>('POST', '/admin/bans/ip/list', { body: {} }),
    addIpBan: (ip: string, expiresInSeconds?: number) =>
      this.http.request<{ success: true }>('POST', '/admin/bans/ip/add', {
        body: expiresInSeconds ? { ip, expires_in_seconds: expiresInSeconds } : { ip },
      }),
    removeIpBan: (ip: string) =>
      this.http.request<{ success: true }>('POST', '/admin/bans/ip/remove', { body: { ip } }),
    auditLog: (query: AuditQuery) =>
      this.http.request<{ logs: AuditEntry[]; total: number }>('POST', '/admin/audit-logs', { body: query }),
    reports: (query: { status?: string; before?: string; limit?: number }) =>
      this.http.request<{ reports: AdminReport[]; total: number }>('POST', '/admin/reports/list', { body: query }),
    closeReport: (reportId: string, outcome: 'resolve' | 'dismiss', note: string) =>
      this.http.request<AdminReport>('POST', `/admin/reports/${outcome}`, {
        body: { report_id: reportId, note: note.trim() || null },
      }),
    instanceConfig: () => this.http.request<InstanceConfig>('POST', '/admin/instance-config/get', { body: {} }),
    testSso: (sso: Record<string, unknown>) =>
      this.http.request<SsoCheck>('POST', '/admin/instance-config/sso/test', { body: { sso } }),
    updateInstanceConfig: (changes: Record<string, unknown>) =>
      this.http.request<InstanceConfig>('POST', '/admin/instance-config/update', { body: changes }),
    apiKeys: () => this.http.request<AdminApiKey[]>('GET', '/admin/api-keys'),
    createApiKey: (body: { name: string; acls: string[]; expires_in_days?: number }, proof: SudoProof = {}) =>
      this.http.request<AdminApiKey & { key: string }>('POST', '/admin/api-keys', { body: { ...body, ...proof } }),
    revokeApiKey: (keyId: string) =>
      this.http.request<{ success: true }>('DELETE', `/admin/api-keys/${encodeURIComponent(keyId)}`),
  };
}
