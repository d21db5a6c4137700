import type { IpBan } from '../platform/state/ip-bans.ts';
/**
 * The one catalogue of error codes. Every `code` the server can put on the wire is listed here with its
 * HTTP status and default message; `docs/errors.md` documents the same set and a test keeps the two in sync.
 * Handlers throw `ApiError`; `toWireBody` is the only place that turns an error into a response body.
 */
export const ERRORS = {
  // Generic fallbacks
  BAD_REQUEST: { status: 400, message: 'Bad request' },
  FORBIDDEN: { status: 403, message: 'Forbidden' },
  NOT_FOUND: { status: 404, message: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed' },
  CONFLICT: { status: 409, message: 'Conflict' },
  REQUEST_TIMEOUT: { status: 408, message: 'Request timeout' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Payload too large' },
  URI_TOO_LONG: { status: 414, message: 'URI too long' },
  PRECONDITION_FAILED: { status: 412, message: 'Precondition failed' },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'Range not satisfiable' },
  REQUEST_HEADER_FIELDS_TOO_LARGE: { status: 431, message: 'Request header fields too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported media type' },
  GENERAL_ERROR: { status: 400, message: 'General error' },
  INTERNAL_SERVER_ERROR: { status: 500, message: 'Internal server error' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service unavailable' },
  INVALID_FORM_BODY: { status: 400, message: 'Invalid form body' },
  RATE_LIMITED: { status: 429, message: 'You are being rate limited.' },
  FEATURE_TEMPORARILY_DISABLED: { status: 403, message: 'This feature is temporarily disabled' },

  // Credentials and policies (docs/errors.md)
  UNAUTHORIZED: { status: 401, message: 'Unauthorized' },
  INVALID_TOKEN: { status: 401, message: 'Invalid token' },
  ACCESS_DENIED: { status: 403, message: 'Access denied' },
  BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED: { status: 403, message: 'Bot accounts cannot use this endpoint' },
  MISSING_OAUTH_SCOPE: { status: 403, message: 'Missing OAuth2 scope' },
  MISSING_PERMISSIONS: { status: 403, message: 'Missing permissions' },
  MISSING_ACL: { status: 403, message: 'Missing ACL' },
  MISSING_ACCESS: { status: 403, message: 'Missing access' },
  SSO_REQUIRED: { status: 403, message: 'Single sign-on is required' },
  ACCOUNT_SUSPICIOUS_ACTIVITY: { status: 403, message: 'Account requires action' },
  SUDO_MODE_REQUIRED: { status: 403, message: 'Sudo mode required' },
  GLOBAL_IP_BANNED: { status: 403, message: 'This IP address is banned' },
  GLOBAL_IP_TEMPORARILY_BANNED: { status: 403, message: 'This IP address is temporarily banned' },
  CAPTCHA_REQUIRED: { status: 400, message: 'Captcha required' },
  INVALID_CAPTCHA: { status: 400, message: 'Invalid captcha' },

  // Authentication area
  REGISTRATION_CLOSED: { status: 403, message: 'Registration is closed' },
  IP_AUTHORIZATION_REQUIRED: { status: 403, message: 'New login location detected, check your email' },
  IP_AUTHORIZATION_RESEND_COOLDOWN: { status: 429, message: 'Please wait before requesting another email' },
  IP_AUTHORIZATION_RESEND_LIMIT_EXCEEDED: { status: 400, message: 'Resend limit exceeded' },
  ACCOUNT_SUSPENDED_TEMPORARILY: { status: 403, message: 'This account is temporarily suspended' },
  ACCOUNT_PENDING_APPROVAL: { status: 403, message: 'This account is waiting for approval' },
  ACCOUNT_SUSPENDED_PERMANENTLY: { status: 403, message: 'This account is suspended' },
  NO_PASSKEYS_REGISTERED: { status: 400, message: 'No passkeys registered' },
  PASSKEY_AUTHENTICATION_FAILED: { status: 401, message: 'Passkey authentication failed' },
  TWO_FA_NOT_ENABLED: { status: 400, message: 'Two-factor authentication is not enabled' },
  TWO_FA_ALREADY_ENABLED: { status: 400, message: 'Two-factor authentication is already enabled' },
  WEBAUTHN_CREDENTIAL_LIMIT_REACHED: { status: 400, message: 'WebAuthn credential limit reached' },
  INVALID_WEBAUTHN_CREDENTIAL: { status: 400, message: 'Invalid WebAuthn credential' },

  // Applications and OAuth2
  MAX_APPLICATIONS: { status: 400, message: 'Maximum number of applications reached' },
  BOT_IS_PRIVATE: { status: 403, message: 'This bot is private' },
  BOT_ALREADY_IN_GUILD: { status: 400, message: 'The bot is already in this guild' },
  LOGIN_REQUIRED: { status: 403, message: 'Sign in again to continue' },
  INVALID_INTERACTIONS_ENDPOINT_URL: { status: 400, message: 'Invalid interactions endpoint URL' },
  INTERACTIONS_ENDPOINT_UNVERIFIED: {
    status: 400,
    message: 'The specified interactions endpoint URL could not be verified',
  },

  // Admin
  ADMIN_API_KEY_NOT_FOUND: { status: 404, message: 'Admin API key not found' },
  UNKNOWN_USER_FLAG: { status: 400, message: 'Unknown user flag' },
  UNKNOWN_SUSPICIOUS_FLAG: { status: 400, message: 'Unknown suspicious activity flag' },
  TEST_HARNESS_FORBIDDEN: { status: 403, message: 'Test harness access denied' },
  REPORT_ALREADY_CLOSED: { status: 400, message: 'This report is already resolved or dismissed' },

  // Missing resources
  UNKNOWN_USER: { status: 404, message: 'Unknown user' },
  UNKNOWN_GUILD: { status: 404, message: 'Unknown guild' },
  UNKNOWN_CHANNEL: { status: 404, message: 'Unknown channel' },
  UNKNOWN_MESSAGE: { status: 404, message: 'Unknown message' },
  UNKNOWN_SCHEDULED_MESSAGE: { status: 404, message: 'Unknown scheduled message' },
  UNKNOWN_ROLE: { status: 404, message: 'Unknown role' },
  UNKNOWN_MEMBER: { status: 404, message: 'Unknown member' },
  UNKNOWN_INVITE: { status: 404, message: 'Unknown invite' },
  UNKNOWN_WEBHOOK: { status: 404, message: 'Unknown webhook' },
  UNKNOWN_APPLICATION: { status: 404, message: 'Unknown application' },
  UNKNOWN_APPLICATION_COMMAND: { status: 404, message: 'Unknown application command' },
  CANNOT_SEND_FRIEND_REQUEST_TO_BLOCKED_USER: {
    status: 400,
    message: 'You cannot send a friend request to a user you blocked',
  },
  FRIEND_REQUEST_BLOCKED: { status: 400, message: 'Friend request blocked' },
  UNKNOWN_INTERACTION: { status: 404, message: 'Unknown interaction' },
  INTERACTION_ALREADY_ACKNOWLEDGED: { status: 400, message: 'Interaction has already been acknowledged' },
  MAX_APPLICATION_COMMANDS: { status: 400, message: 'Maximum number of application commands reached' },
  UNKNOWN_WEBAUTHN_CREDENTIAL: { status: 404, message: 'Unknown WebAuthn credential' },
  UNKNOWN_BAN: { status: 404, message: 'Unknown ban' },
  UNKNOWN_ATTACHMENT: { status: 404, message: 'Unknown attachment' },
  UNKNOWN_REPORT: { status: 404, message: 'Unknown report' },

  // Chat core
  MAX_GUILDS: { status: 400, message: 'Maximum number of guilds reached' },
  MAX_GUILD_CHANNELS: { status: 400, message: 'Maximum number of guild channels reached' },
  MAX_GUILD_ROLES: { status: 400, message: 'Maximum number of guild roles reached' },
  MAX_INVITES: { status: 400, message: 'Maximum number of invites reached' },
  MAX_REACTIONS: { status: 400, message: 'Maximum number of reactions reached' },
  MAX_GROUP_DM_RECIPIENTS: { status: 400, message: 'Maximum number of group DM recipients reached' },
  // Discord's 50007 and 50033: a DM the recipient's blocks or privacy settings refuse; a group DM recipient
  // who is not the adder's friend.
  CANNOT_SEND_MESSAGES_TO_THIS_USER: { status: 403, message: 'Cannot send messages to this user' },
  INVALID_RECIPIENTS: { status: 400, message: 'Invalid recipients' },
  MAX_WEBHOOKS_PER_CHANNEL: { status: 400, message: 'Maximum number of webhooks per channel reached' },
  SLOWMODE_RATE_LIMITED: { status: 400, message: 'Slowmode rate limit' },
  CANNOT_SEND_EMPTY_MESSAGE: { status: 400, message: 'Cannot send an empty message' },
  CANNOT_SEND_MESSAGES_IN_NON_TEXT_CHANNEL: { status: 400, message: 'Cannot send messages in a non-text channel' },
  MESSAGE_EDIT_CHANGES_NOTHING: { status: 400, message: 'The edit changes nothing' },
  CANNOT_EDIT_OTHER_USER_MESSAGE: { status: 403, message: "Cannot edit another user's message" },
  USER_BANNED_FROM_GUILD: { status: 403, message: 'You are banned from this guild' },
  MAX_PINS: { status: 400, message: 'Maximum number of pinned messages reached' },
  COMMUNICATION_DISABLED: { status: 403, message: 'You are timed out in this guild' },
  MAX_SCHEDULED_MESSAGES: { status: 400, message: 'Maximum number of scheduled messages reached' },
  MAX_SAVED_MESSAGES: { status: 400, message: 'Maximum number of saved messages reached' },
  CANNOT_REPORT_YOURSELF: { status: 400, message: 'You cannot report yourself' },
  UNKNOWN_EMOJI: { status: 400, message: 'Unknown emoji' },
  MAX_EMOJIS: { status: 400, message: 'Maximum number of emojis reached' },
  MAX_ANIMATED_EMOJIS: { status: 400, message: 'Maximum number of animated emojis reached' },
  UNKNOWN_STICKER: { status: 404, message: 'Unknown sticker' },
  MAX_STICKERS: { status: 400, message: 'Maximum number of stickers reached' },
  INVALID_STICKER_SENT: { status: 400, message: 'Invalid sticker sent' },
  // Discord's 50021: forwarding a system message (a join, a pin notice, a call…).
  CANNOT_EXECUTE_ACTION_ON_SYSTEM_MESSAGE: { status: 400, message: 'Cannot execute action on a system message' },
  CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE: { status: 400, message: 'Cannot execute action on this channel type' },
  THREAD_ALREADY_CREATED_FOR_MESSAGE: { status: 400, message: 'A thread has already been created for this message' },
  THREAD_ARCHIVED: { status: 400, message: 'Thread is archived' },
  THREAD_LOCKED: { status: 403, message: 'Thread is locked' },

  // Data export (docs/accounts.md#your-data-data-export)
  HARVEST_COOLDOWN: { status: 429, message: 'You can request your data once every 24 hours' },
  HARVEST_REQUIRES_VERIFIED_EMAIL: { status: 403, message: 'Verify your email address to request your data' },
  UNKNOWN_HARVEST: { status: 404, message: 'Unknown data export' },
  HARVEST_LINK_USED: { status: 410, message: 'This download link was already used' },
  HARVEST_LINK_EXPIRED: { status: 410, message: 'This download link has expired' },

  // Voice
  TARGET_NOT_CONNECTED_TO_VOICE: { status: 400, message: 'Target user is not connected to voice' },
  UNKNOWN_CALL: { status: 404, message: 'Unknown call' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * Element codes used inside `INVALID_FORM_BODY.errors[]`. They never appear as a top-level `code`,
 * but they are part of the wire contract too, so they are catalogued and documented.
 */
export const FORM_ERRORS = [
  'BASE_TYPE_REQUIRED',
  'CONTENT_EXCEEDS_MAX_LENGTH',
  'INVALID_EMAIL_ADDRESS',
  'INVALID_FORMAT',
  'INVALID_SNOWFLAKE_FORMAT',
  'SNOWFLAKE_OUT_OF_RANGE',
  'EMAIL_ALREADY_IN_USE',
  'USERNAME_ALREADY_TAKEN',
  'PASSWORD_IS_TOO_COMMON',
  'INVALID_EMAIL_OR_PASSWORD',
  'SESSION_TIMEOUT',
  'TOTP_NOT_ENABLED',
  'INVALID_CODE',
  'INVALID_MFA_CODE',
  'INVALID_PASSWORD',
  'INVALID_OR_EXPIRED_VERIFICATION_TOKEN',
  'INVALID_OR_EXPIRED_RESET_TOKEN',
  'INVALID_OR_EXPIRED_REVERT_TOKEN',
  'INVALID_OR_EXPIRED_AUTHORIZATION_TOKEN',
  'INVALID_OR_EXPIRED_AUTHORIZATION_TICKET',
  'INVALID_OR_EXPIRED_EMAIL_CHANGE_TICKET',
  'INVALID_OR_EXPIRED_EMAIL_TOKEN',
  'INVALID_OR_EXPIRED_SSO_STATE',
  'INVALID_SSO_TOKEN',
  'SSO_IDENTITY_MISMATCH',
  'PRIVATE_ADDRESS_NOT_ALLOWED',
  'EMAIL_MUST_BE_CHANGED_VIA_TOKEN',
  'INVALID_PROOF_TOKEN',
  'CANNOT_LEAVE_GUILD_AS_OWNER',
  'CANNOT_DM_YOURSELF',
  'CANNOT_SPECIFY_BOTH_BEFORE_AND_AFTER',
  'UPLOADED_ATTACHMENT_NOT_FOUND',
  'BINARY_TYPE_MAX_SIZE',
  'FILE_NOT_FOUND',
  'FORWARDED_MESSAGE_HAS_CONTENT',
  'INVALID_REDIRECT_URI',
  'INVALID_SCOPE',
  'UNKNOWN_ACL',
  'UNKNOWN_GUILD_CHANNEL',
  'UNKNOWN_PRIVATE_CHANNEL',
] as const;

export type FormErrorCode = (typeof FORM_ERRORS)[number];

export interface FieldError {
  path: string;
  code: FormErrorCode;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  /** Extra top-level members of the wire body (`required_scope`, `data`, `retry_after`, …). */
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    options: { message?: string; extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    // An ApiError is an answer, not a fault: nobody reads its stack, and capturing (and, under source maps,
    // formatting) one made every 401/404 several times dearer than the request itself.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(options.message ?? ERRORS[code].message);
    Error.stackTraceLimit = stackTraceLimit;
    this.code = code;
    this.status = ERRORS[code].status;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }
}

/** Shared frozen instances of errors without extras, and their wire text, built once per code. */
const plainErrors = new Map<ErrorCode, ApiError>();
const plainWireTexts = new WeakMap<ApiError, string>();

/**
 * A shared, frozen `ApiError` for a bare code. For refusals on hot paths (the 401 of an unknown token):
 * constructing an Error captures a stack for the uncaught-exception reporter even with
 * `stackTraceLimit` 0, which cost more than the rest of the refusal (docs/performance.md).
 */
export function plainError(code: ErrorCode): ApiError {
  let error = plainErrors.get(code);
  if (!error) {
    error = new ApiError(code);
    Object.freeze(error.extra);
    Object.freeze(error.headers);
    Object.freeze(error);
    plainErrors.set(code, error);
    plainWireTexts.set(error, JSON.stringify(toWireBody(error)));
  }
  return error;
}

/** The response body text of an error. */
export function wireText(error: ApiError): string {
  return plainWireTexts.get(error) ?? JSON.stringify(toWireBody(error));
}

export function formError(fields: FieldError[]): ApiError {
  return new ApiError('INVALID_FORM_BODY', { extra: { errors: fields } });
}

export function fieldError(path: string, code: FormErrorCode, message?: string): ApiError {
  return formError([{ path, code, message: message ?? defaultFieldMessage(code) }]);
}

function defaultFieldMessage(code: FormErrorCode): string {
  return code
    .toLowerCase()
    .split('_')
    .map((word, index) => (index === 0 ? word.charAt(0).toUpperCase() + word.slice(1) : word))
    .join(' ');
}

export function toWireBody(error: ApiError): Record<string, unknown> {
  return { code: error.code, message: error.message, ...error.extra };
}

export const INTERNAL_ERROR_BODY = Object.freeze({
  code: 'INTERNAL_SERVER_ERROR',
  message: 'Internal server error',
});

/** A 429 with docs/conventions.md#rate-limits's body and headers (`headers` adds the `X-RateLimit-*` set that applies). */
export function rateLimited(retryAfterMs: number, global: boolean, headers: Record<string, string> = {}): ApiError {
  const retryAfter = Math.max(retryAfterMs / 1000, 0.001);
  return new ApiError('RATE_LIMITED', {
    extra: { global, retry_after: Math.round(retryAfter * 1000) / 1000 },
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfter))), ...headers },
  });
}

/** The 403 a banned address gets on every request and gateway upgrade (docs/conventions.md#ip-bans). */
export function bannedError(ban: IpBan, ip: string, now: number): ApiError {
  const permanent = ban.expiresAt === null;
  const headers: Record<string, string> = {};
  if (!permanent) headers['Retry-After'] = String(Math.max(1, Math.ceil(((ban.expiresAt as number) - now) / 1000)));
  return new ApiError(permanent ? 'GLOBAL_IP_BANNED' : 'GLOBAL_IP_TEMPORARILY_BANNED', {
    extra: {
      ip_address: ip,
      appeal_email: null,
      appeals_supported: false,
      ban_kind: permanent ? 'permanent' : 'temporary',
      expires_at: permanent ? null : new Date(ban.expiresAt as number).toISOString(),
    },
    headers,
  });
}

/**
 * A handler-level allowance ran out (docs/conventions.md#rate-limits: the same 429 as a route bucket, with `X-RateLimit-Limit`,
 * `-Remaining`, `-Reset` and `-Reset-After`, without `-Bucket`).
 */
export function allowanceExceeded(limit: number, retryAfterMs: number, resetAfterMs: number, now: number): ApiError {
  return rateLimited(retryAfterMs, false, {
    'X-RateLimit-Scope': 'user',
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(Math.ceil((now + resetAfterMs) / 1000)),
    'X-RateLimit-Reset-After': (resetAfterMs / 1000).toFixed(3),
  });
}
