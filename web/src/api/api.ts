import { HttpClient } from './http.ts';
import type {
  LoginResult,
  PrivateUser,
  PublicApplication,
  RegistrationPending,
  SessionInfo,
  SsoStatus,
  SudoMethods,
  SudoProof,
  TokenResponse,
  UserGuild,
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
    updateSettings: (changes: Record<string, unknown>) =>
      this.http.request<Record<string, unknown>>('PATCH', '/users/@me/settings', { body: changes }),
    guilds: () => this.http.request<UserGuild[]>('GET', '/users/@me/guilds'),
    sudoMethods: () => this.http.request<SudoMethods & { has_mfa: boolean }>('GET', '/users/@me/sudo/mfa-methods'),
    sudoWebauthnOptions: () =>
      this.http.request<unknown>('POST', '/users/@me/sudo/webauthn/authentication-options', { body: {} }),
  };

  readonly mfa = {
    webauthnCredentials: () =>
      this.http.request<{ id: string; name: string; created_at: string; last_used_at: string | null }[]>(
        'GET',
        '/users/@me/mfa/webauthn/credentials',
      ),
    webauthnRegistrationOptions: (proof: SudoProof = {}) =>
      this.http.request<unknown>('POST', '/users/@me/mfa/webauthn/credentials/registration-options', { body: proof }),
    addWebauthnCredential: (response: unknown, challenge: string, name: string) =>
      this.http.request<void>('POST', '/users/@me/mfa/webauthn/credentials', { body: { response, challenge, name } }),
  };

  readonly oauth2 = {
    application: (id: string) =>
      this.http.request<PublicApplication>('GET', `/oauth2/applications/${encodeURIComponent(id)}/public`),
    consent: (request: ConsentRequest) =>
      this.http.request<{ redirect_to: string }>('POST', '/oauth2/authorize/consent', { body: request }),
  };
}
