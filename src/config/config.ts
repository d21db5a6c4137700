import { type Cidr, parseCidrList } from '../platform/net/cidr.ts';
import { isSafeKey } from '../platform/storage/object-store.ts';

/**
 * Every setting the server reads, with its environment variable and CLI flag. `loadConfig` is pure: the
 * entrypoint hands it the environment and argv, so nothing else in the code base reads `process.env`.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** A streaming replica for reads that tolerate lag (docs/deployment.md#read-replica); needs `databaseUrl`. */
  databaseReplicaUrl: string | undefined;
  redisUrl: string | undefined;
  redisPrefix: string;
  smtpUrl: string | undefined;
  smtpFrom: string;
  publicUrl: string;
  webappUrl: string;
  trustedProxies: Cidr[];
  corsOrigins: string[];
  testMode: boolean;
  testToken: string | undefined;
  sudoSecret: string | undefined;
  mediaProxySecret: string | undefined;
  relaySecret: string | undefined;
  mfaSecret: string | undefined;
  ipBanFailures: number;
  ipBanWindowSeconds: number;
  ipBanDurationSeconds: number;
  ipBanExempt: Cidr[];
  ipAuthorization: boolean;
  rateLimitOverrides: Record<string, { limit: number; windowSeconds: number }>;
  gatewayResumeWindowMs: number;
  /** Instance settings and manual IP bans are read again from the database this often. */
  settingsReloadSeconds: number;
  /** Time a client has to send its request headers. */
  httpHeadersTimeoutMs: number;
  /** Time a client has to send a whole request, body included. */
  httpRequestTimeoutMs: number;
  /** A socket silent this long (mid-headers, mid-body, or idle between requests) is closed. */
  httpIdleTimeoutMs: number;
  adminOAuth2ClientSecret: string | undefined;
  adminOAuth2RedirectUris: string[];
  webauthnRpId: string;
  webauthnOrigins: string[];
  mediaAllowPrivateTargets: boolean;
  captchaProvider: CaptchaProvider;
  captchaSecret: string | undefined;
  hcaptchaSiteKey: string | undefined;
  turnstileSiteKey: string | undefined;
  /** Unset only while the provider is `none`. */
  captchaVerifyUrl: string | undefined;
  captchaTimeoutMs: number;
  /** Requests in flight at once to one application's interactions endpoint (docs/bots.md). */
  interactionsEndpointConcurrency: number;
  /** Unset = objects on the local filesystem under the data directory. */
  s3Bucket: string | undefined;
  s3Endpoint: string | undefined;
  s3Region: string;
  s3AccessKeyId: string | undefined;
  s3SecretAccessKey: string | undefined;
  s3ForcePathStyle: boolean;
  s3Prefix: string | undefined;
  roles: Set<'api' | 'gateway' | 'media'>;
  /** Voice media (docs/voice.md): extra announced addresses, UDP port range, TURN servers. */
  voiceAnnouncedAddresses: string[];
  voicePortRange: [number, number] | undefined;
  voiceTurnUrls: string[];
  voiceTurnUsername: string | undefined;
  voiceTurnCredential: string | undefined;
  /** How long a DM or group-DM call rings someone who neither accepts nor declines (docs/voice.md). */
  voiceRingTimeoutMs: number;
  workerId: number;
  /** The local object directory (`<data dir>/objects`) is one directory shared by every node. */
  sharedObjectDir: boolean;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** `json`: one JSON object per line (production); `pretty`: one human line per event (development). */
  logFormat: 'json' | 'pretty';
  /** `commit`: the embedded database syncs every commit to disk; `off`: PGlite's default (no fsync). */
  pgliteSync: 'commit' | 'off';
  /** Bearer token that opens `GET /metrics` on the main port; unset = not served there. */
  metricsToken: string | undefined;
  /** A separate port serving only `/metrics` without a token; unset = none. */
  metricsPort: number | undefined;
  metricsHost: string;
}

export class ConfigError extends Error {}

export const CAPTCHA_PROVIDERS = ['none', 'hcaptcha', 'turnstile'] as const;
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number];

const CAPTCHA_VERIFY_URLS: Record<Exclude<CaptchaProvider, 'none'>, string> = {
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
};

type Parser<T> = (raw: string) => T;

interface Setting<K extends keyof Config> {
  key: K;
  env: string;
  flag: string;
  describe: string;
  parse: Parser<Config[K]>;
  fallback: (partial: Partial<Config>, raw: Record<string, string | undefined>) => Config[K];
}

const integer =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`must be an integer, got "${raw}"`);
    const value = Number(raw);
    if (value < min || value > max) throw new ConfigError(`must be between ${min} and ${max}, got ${value}`);
    return value;
  };

const boolean: Parser<boolean> = (raw) => {
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(value)) return false;
  throw new ConfigError(`must be a boolean (1/0, true/false), got "${raw}"`);
};

const text: Parser<string> = (raw) => raw;
const optionalText: Parser<string | undefined> = (raw) => (raw === '' ? undefined : raw);

const httpUrl: Parser<string> = (raw) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`must be an absolute URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('must use http or https');
  return url.origin + url.pathname.replace(/\/+$/, '');
};

const urlWithSchemes =
  (...schemes: string[]): Parser<string | undefined> =>
  (raw) => {
    if (raw === '') return undefined;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError('must be a URL');
    }
    if (!schemes.includes(url.protocol)) throw new ConfigError(`must use ${schemes.join(' or ')}`);
    return raw;
  };

const list: Parser<string[]> = (raw) =>
  raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

const cidrs: Parser<Cidr[]> = (raw) => {
  try {
    return parseCidrList(raw);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
};

const secret: Parser<string | undefined> = (raw) => {
  if (raw === '') return undefined;
  if (raw.length < 32) throw new ConfigError('must be at least 32 characters');
  return raw;
};

const rateLimits: Parser<Config['rateLimitOverrides']> = (raw) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('must be a JSON object like {"auth:login":{"limit":10,"windowSeconds":10}}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConfigError('must be a JSON object');
  const out: Config['rateLimitOverrides'] = {};
  for (const [bucket, value] of Object.entries(parsed)) {
    const v = value as { limit?: unknown; windowSeconds?: unknown };
    if (!Number.isInteger(v?.limit) || !Number.isFinite(v?.windowSeconds) || (v.limit as number) < 1)
      throw new ConfigError(`bucket "${bucket}" needs an integer limit ≥ 1 and a numeric windowSeconds`);
    out[bucket] = { limit: v.limit as number, windowSeconds: v.windowSeconds as number };
  }
  return out;
};

const captchaProvider: Parser<CaptchaProvider> = (raw) => {
  if (!(CAPTCHA_PROVIDERS as readonly string[]).includes(raw))
    throw new ConfigError(`must be one of ${CAPTCHA_PROVIDERS.join(', ')}, got "${raw}"`);
  return raw as CaptchaProvider;
};

const roles: Parser<Config['roles']> = (raw) => {
  const values = list(raw);
  const allowed = ['api', 'gateway', 'media'] as const;
  for (const value of values)
    if (!(allowed as readonly string[]).includes(value))
      throw new ConfigError(`unknown role "${value}" (api, gateway, media)`);
  if (values.length === 0) throw new ConfigError('needs at least one role');
  return new Set(values as (typeof allowed)[number][]);
};

const portRange: Parser<[number, number] | undefined> = (raw) => {
  if (raw === '') return undefined;
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(raw);
  const min = Number(match?.[1]);
  const max = Number(match?.[2]);
  if (!match || min < 1024 || max > 65535 || min >= max) throw new ConfigError('must be "min-max" within 1024-65535');
  return [min, max];
};

const turnUrls: Parser<string[]> = (raw) => {
  const urls = list(raw);
  for (const url of urls)
    if (!/^(stun|turns?):[^\s]+$/.test(url)) throw new ConfigError(`"${url}" is not a stun:, turn: or turns: URL`);
  return urls;
};

const s3Bucket: Parser<string | undefined> = (raw) => {
  if (raw === '') return undefined;
  // Loose on purpose: S3-compatible services differ on the rules; this only keeps the name one path segment.
  if (!/^[A-Za-z0-9._-]{1,255}$/.test(raw)) throw new ConfigError('must be a bucket name (letters, digits, . _ -)');
  return raw;
};

const s3Endpoint: Parser<string | undefined> = (raw) => {
  const value = urlWithSchemes('http:', 'https:')(raw);
  // The endpoint is logged at start; credentials belong in the key settings, never in the URL.
  if (value && (new URL(value).username || new URL(value).password))
    throw new ConfigError('must not contain credentials (use HEARTH_S3_ACCESS_KEY_ID and HEARTH_S3_SECRET_ACCESS_KEY)');
  return value;
};

const s3Prefix: Parser<string | undefined> = (raw) => {
  const value = raw.replace(/^\/+|\/+$/g, '');
  if (value === '') return undefined;
  if (!isSafeKey(value)) throw new ConfigError('must be slash-separated names without empty, . or .. segments');
  return value;
};

const nonEmpty: Parser<string> = (raw) => {
  if (raw.trim() === '') throw new ConfigError('must not be empty');
  return raw.trim();
};

const logLevel: Parser<Config['logLevel']> = (raw) => {
  const levels = ['debug', 'info', 'warn', 'error', 'silent'] as const;
  if (!(levels as readonly string[]).includes(raw)) throw new ConfigError(`must be one of ${levels.join(', ')}`);
  return raw as Config['logLevel'];
};

function setting<K extends keyof Config>(s: Setting<K>): Setting<K> {
  return s;
}

export const SETTINGS = [
  setting({
    key: 'port',
    env: 'PORT',
    flag: '--port',
    describe: 'HTTP port',
    parse: integer(0, 65535),
    fallback: () => 8080,
  }),
  setting({
    key: 'host',
    env: 'HOST',
    flag: '--host',
    describe: 'Address to listen on',
    parse: text,
    fallback: () => '0.0.0.0',
  }),
  setting({
    key: 'dataDir',
    env: 'HEARTH_DATA_DIR',
    flag: '--data-dir',
    describe: 'Directory for the embedded database, generated secrets and uploads',
    parse: text,
    fallback: () => './data',
  }),
  setting({
    key: 'databaseUrl',
    env: 'DATABASE_URL',
    flag: '--database-url',
    describe: 'PostgreSQL connection string; unset = embedded PGlite in the data directory',
    parse: urlWithSchemes('postgres:', 'postgresql:'),
    fallback: () => undefined,
  }),
  setting({
    key: 'databaseReplicaUrl',
    env: 'DATABASE_REPLICA_URL',
    flag: '--database-replica-url',
    describe: 'A PostgreSQL streaming replica for reads that tolerate lag (message search); needs DATABASE_URL',
    parse: urlWithSchemes('postgres:', 'postgresql:'),
    fallback: () => undefined,
  }),
  setting({
    key: 'pgliteSync',
    env: 'HEARTH_PGLITE_SYNC',
    flag: '--pglite-sync',
    describe:
      'Embedded database durability: commit (every commit synced to disk before it is acknowledged) or off (faster; survives a killed process, not a power cut)',
    parse: (raw) => {
      if (raw !== 'commit' && raw !== 'off') throw new ConfigError('must be commit or off');
      return raw;
    },
    fallback: () => 'commit' as const,
  }),
  setting({
    key: 'redisUrl',
    env: 'REDIS_URL',
    flag: '--redis-url',
    describe: 'Redis/Valkey URL for shared state; unset = in-process state',
    parse: urlWithSchemes('redis:', 'rediss:'),
    fallback: () => undefined,
  }),
  setting({
    key: 'redisPrefix',
    env: 'HEARTH_REDIS_PREFIX',
    flag: '--redis-prefix',
    describe: 'Prefix of every Redis key and channel (several deployments can share one Redis)',
    parse: text,
    fallback: () => 'hearth:',
  }),
  setting({
    key: 'smtpUrl',
    env: 'SMTP_URL',
    flag: '--smtp-url',
    describe: 'SMTP server URL (smtp:// or smtps://); unset = emails are not sent (captured in test mode)',
    parse: urlWithSchemes('smtp:', 'smtps:'),
    fallback: () => undefined,
  }),
  setting({
    key: 'publicUrl',
    env: 'HEARTH_PUBLIC_URL',
    flag: '--public-url',
    describe: 'Public base URL that discovery announces',
    parse: httpUrl,
    fallback: (partial) => `http://localhost:${partial.port ?? 8080}`,
  }),
  setting({
    key: 'smtpFrom',
    env: 'SMTP_FROM',
    flag: '--smtp-from',
    describe: "Sender address of outgoing email (default: no-reply at the public URL's host)",
    parse: text,
    fallback: (partial) => `Hearth <no-reply@${new URL(partial.publicUrl ?? 'http://localhost').hostname}>`,
  }),
  setting({
    key: 'webappUrl',
    env: 'HEARTH_WEBAPP_URL',
    flag: '--webapp-url',
    describe: 'Base URL of the web client; emailed links point here (default: the public URL)',
    parse: httpUrl,
    fallback: (partial) => partial.publicUrl ?? 'http://localhost:8080',
  }),
  setting({
    key: 'trustedProxies',
    env: 'HEARTH_TRUSTED_PROXIES',
    flag: '--trusted-proxies',
    describe: 'Comma-separated CIDRs of reverse proxies whose X-Forwarded-For is trusted',
    parse: cidrs,
    fallback: () => [],
  }),
  setting({
    key: 'corsOrigins',
    env: 'HEARTH_CORS_ORIGINS',
    flag: '--cors-origins',
    describe: 'Comma-separated origins allowed by CORS (default: the web app origin)',
    parse: list,
    fallback: (partial) => [new URL(partial.webappUrl ?? 'http://localhost:8080').origin],
  }),
  setting({
    key: 'testMode',
    env: 'HEARTH_TEST_MODE',
    flag: '--test-mode',
    describe: 'Enables the /test harness',
    parse: boolean,
    fallback: () => false,
  }),
  setting({
    key: 'testToken',
    env: 'HEARTH_TEST_TOKEN',
    flag: '--test-token',
    describe: 'Value of X-Test-Token that the test harness requires',
    parse: optionalText,
    fallback: () => undefined,
  }),
  setting({
    key: 'sudoSecret',
    env: 'HEARTH_SUDO_SECRET',
    flag: '--sudo-secret',
    describe:
      'HS256 secret for sudo-mode proofs, and the key of the check part inside session and bot tokens (≥32 chars; generated into the data directory if unset; changing it signs every session and bot out)',
    parse: secret,
    fallback: () => undefined,
  }),
  setting({
    key: 'mediaProxySecret',
    env: 'HEARTH_MEDIA_PROXY_SECRET',
    flag: '--media-proxy-secret',
    describe: 'HMAC secret for signed external media paths (generated into the data directory if unset)',
    parse: secret,
    fallback: () => undefined,
  }),
  setting({
    key: 'relaySecret',
    env: 'HEARTH_RELAY_SECRET',
    flag: '--relay-secret',
    describe: 'HMAC secret for upload capabilities (generated into the data directory if unset)',
    parse: secret,
    fallback: () => undefined,
  }),
  setting({
    key: 'mfaSecret',
    env: 'HEARTH_MFA_SECRET',
    flag: '--mfa-secret',
    describe:
      'Key material for encrypting TOTP secrets, the SSO client secret and the OpenID Connect signing keys at rest (generated into the data directory if unset; keep it: changing it disables TOTP and makes a new signing key)',
    parse: secret,
    fallback: () => undefined,
  }),
  setting({
    key: 'ipBanFailures',
    env: 'HEARTH_IP_BAN_FAILURES',
    flag: '--ip-ban-failures',
    describe: 'Authentication failures per IP within the window that trigger a ban (0 disables)',
    parse: integer(0, 1_000_000),
    fallback: () => 50,
  }),
  setting({
    key: 'ipBanWindowSeconds',
    env: 'HEARTH_IP_BAN_WINDOW_S',
    flag: '--ip-ban-window',
    describe: 'Sliding window for counting failures, seconds',
    parse: integer(1, 86_400 * 30),
    fallback: () => 600,
  }),
  setting({
    key: 'ipBanDurationSeconds',
    env: 'HEARTH_IP_BAN_DURATION_S',
    flag: '--ip-ban-duration',
    describe: 'How long an automatic ban lasts, seconds',
    parse: integer(1, 86_400 * 365),
    fallback: () => 3600,
  }),
  setting({
    key: 'ipBanExempt',
    env: 'HEARTH_IP_BAN_EXEMPT',
    flag: '--ip-ban-exempt',
    describe: 'Comma-separated CIDRs never banned automatically',
    parse: cidrs,
    fallback: () => [],
  }),
  setting({
    key: 'sharedObjectDir',
    env: 'HEARTH_SHARED_OBJECT_DIR',
    flag: '--shared-object-dir',
    describe:
      'Declare <data dir>/objects one directory shared by every process (else a second process on the same database is refused unless HEARTH_S3_BUCKET is set)',
    parse: boolean,
    fallback: () => false,
  }),
  setting({
    key: 'ipAuthorization',
    env: 'HEARTH_IP_AUTHORIZATION',
    flag: '--ip-authorization',
    describe: 'Require emailed approval for logins from new addresses (needs SMTP, or test mode)',
    parse: boolean,
    fallback: () => true,
  }),
  setting({
    key: 'rateLimitOverrides',
    env: 'HEARTH_RATE_LIMITS',
    flag: '--rate-limits',
    describe: 'JSON object overriding route buckets: {"<bucket>":{"limit":N,"windowSeconds":S}}',
    parse: rateLimits,
    fallback: () => ({}),
  }),
  setting({
    key: 'gatewayResumeWindowMs',
    env: 'HEARTH_GATEWAY_RESUME_WINDOW_MS',
    flag: '--gateway-resume-window-ms',
    describe: 'How long a closed gateway session can be resumed (default 60000; 10000 in test mode)',
    parse: integer(1000, 3_600_000),
    fallback: (partial) => (partial.testMode ? 10_000 : 60_000),
  }),
  setting({
    key: 'settingsReloadSeconds',
    env: 'HEARTH_SETTINGS_RELOAD_S',
    flag: '--settings-reload',
    describe:
      'Instance settings and manual IP bans are read again from the database this often, seconds (besides at once on every change and after a Redis reconnect)',
    parse: integer(1, 86_400),
    fallback: () => 60,
  }),
  setting({
    key: 'httpHeadersTimeoutMs',
    env: 'HEARTH_HTTP_HEADERS_TIMEOUT_MS',
    flag: '--http-headers-timeout-ms',
    describe: 'Time a client has to send its request headers (default 20000)',
    parse: integer(500, 600_000),
    fallback: () => 20_000,
  }),
  setting({
    key: 'httpRequestTimeoutMs',
    env: 'HEARTH_HTTP_REQUEST_TIMEOUT_MS',
    flag: '--http-request-timeout-ms',
    describe: 'Time a client has to send a whole request, body included (default 300000)',
    parse: integer(1000, 3_600_000),
    fallback: () => 300_000,
  }),
  setting({
    key: 'httpIdleTimeoutMs',
    env: 'HEARTH_HTTP_IDLE_TIMEOUT_MS',
    flag: '--http-idle-timeout-ms',
    describe: 'A socket that sends nothing this long, mid-request or between requests, is closed (default 30000)',
    parse: integer(500, 600_000),
    fallback: () => 30_000,
  }),
  setting({
    key: 'adminOAuth2ClientSecret',
    env: 'HEARTH_ADMIN_OAUTH2_CLIENT_SECRET',
    flag: '--admin-oauth2-client-secret',
    describe: 'Client secret of the built-in Admin OAuth2 application (else generated by the bootstrap CLI)',
    parse: optionalText,
    fallback: () => undefined,
  }),
  setting({
    key: 'adminOAuth2RedirectUris',
    env: 'HEARTH_ADMIN_OAUTH2_REDIRECT_URIS',
    flag: '--admin-oauth2-redirect-uris',
    describe: 'Comma-separated redirect URIs of the built-in Admin OAuth2 application',
    parse: list,
    fallback: (partial) => [`${partial.publicUrl ?? 'http://localhost:8080'}/admin/oauth2/callback`],
  }),
  setting({
    key: 'webauthnRpId',
    env: 'HEARTH_WEBAUTHN_RP_ID',
    flag: '--webauthn-rp-id',
    describe: 'WebAuthn relying-party ID (default: the web app host name)',
    parse: text,
    fallback: (partial) => new URL(partial.webappUrl ?? 'http://localhost:8080').hostname,
  }),
  setting({
    key: 'webauthnOrigins',
    env: 'HEARTH_WEBAUTHN_ORIGINS',
    flag: '--webauthn-origins',
    describe: 'Comma-separated origins accepted in WebAuthn responses (default: the web app origin)',
    parse: list,
    fallback: (partial) => [new URL(partial.webappUrl ?? 'http://localhost:8080').origin],
  }),
  setting({
    key: 'mediaAllowPrivateTargets',
    env: 'HEARTH_MEDIA_ALLOW_PRIVATE',
    flag: '--media-allow-private',
    describe: 'Let the media proxy fetch private, loopback and link-local addresses (SSRF guard off)',
    parse: boolean,
    fallback: () => false,
  }),
  setting({
    key: 'captchaProvider',
    env: 'HEARTH_CAPTCHA_PROVIDER',
    flag: '--captcha-provider',
    describe: 'CAPTCHA on register, login and forgot-password: none, hcaptcha or turnstile',
    parse: captchaProvider,
    fallback: () => 'none',
  }),
  setting({
    key: 'captchaSecret',
    env: 'HEARTH_CAPTCHA_SECRET',
    flag: '--captcha-secret',
    describe: "Secret key of the CAPTCHA provider's siteverify API (required unless the provider is none)",
    parse: optionalText,
    fallback: () => undefined,
  }),
  setting({
    key: 'hcaptchaSiteKey',
    env: 'HEARTH_HCAPTCHA_SITE_KEY',
    flag: '--hcaptcha-site-key',
    describe: 'hCaptcha site key that discovery announces (required with the hcaptcha provider)',
    parse: optionalText,
    fallback: () => undefined,
  }),
  setting({
    key: 'turnstileSiteKey',
    env: 'HEARTH_TURNSTILE_SITE_KEY',
    flag: '--turnstile-site-key',
    describe: 'Cloudflare Turnstile site key that discovery announces (required with the turnstile provider)',
    parse: optionalText,
    fallback: () => undefined,
  }),
  setting({
    key: 'captchaVerifyUrl',
    env: 'HEARTH_CAPTCHA_VERIFY_URL',
    flag: '--captcha-verify-url',
    describe: "Overrides the provider's siteverify URL (default: the provider's own)",
    parse: urlWithSchemes('http:', 'https:'),
    fallback: (partial) =>
      partial.captchaProvider && partial.captchaProvider !== 'none'
        ? CAPTCHA_VERIFY_URLS[partial.captchaProvider]
        : undefined,
  }),
  setting({
    key: 'captchaTimeoutMs',
    env: 'HEARTH_CAPTCHA_TIMEOUT_MS',
    flag: '--captcha-timeout-ms',
    describe: 'How long to wait for the siteverify answer before refusing the CAPTCHA, milliseconds',
    parse: integer(100, 60_000),
    fallback: () => 5000,
  }),
  setting({
    key: 'interactionsEndpointConcurrency',
    env: 'HEARTH_INTERACTIONS_ENDPOINT_CONCURRENCY',
    flag: '--interactions-endpoint-concurrency',
    describe: "Requests in flight at once to one application's interactions endpoint URL; an interaction over it fails",
    parse: integer(1, 1000),
    fallback: () => 25,
  }),
  setting({
    key: 's3Bucket',
    env: 'HEARTH_S3_BUCKET',
    flag: '--s3-bucket',
    describe: 'S3-compatible bucket for uploaded objects; unset = the local filesystem (<data dir>/objects)',
    parse: s3Bucket,
    fallback: () => undefined,
  }),
  setting({
    key: 's3Endpoint',
    env: 'HEARTH_S3_ENDPOINT',
    flag: '--s3-endpoint',
    describe: 'S3 API URL (MinIO, Garage, Ceph RGW, R2…); unset = AWS for the region',
    parse: s3Endpoint,
    fallback: () => undefined,
  }),
  setting({
    key: 's3Region',
    env: 'HEARTH_S3_REGION',
    flag: '--s3-region',
    describe: 'Region the S3 requests are signed for',
    parse: nonEmpty,
    fallback: () => 'us-east-1',
  }),
  setting({
    key: 's3AccessKeyId',
    env: 'HEARTH_S3_ACCESS_KEY_ID',
    flag: '--s3-access-key-id',
    describe: 'S3 access key id (required with a bucket)',
    parse: optionalText,
    fallback: () => undefined,
  }),
  setting({
    key: 's3SecretAccessKey',
    env: 'HEARTH_S3_SECRET_ACCESS_KEY',
    flag: '--s3-secret-access-key',
    describe: 'S3 secret access key (required with a bucket; never logged)',
    parse: optionalText,
    fallback: () => undefined,
  }),
  setting({
    key: 's3ForcePathStyle',
    env: 'HEARTH_S3_FORCE_PATH_STYLE',
    flag: '--s3-force-path-style',
    describe: 'Address the bucket as <endpoint>/<bucket> instead of <bucket>.<endpoint host>',
    parse: boolean,
    fallback: () => false,
  }),
  setting({
    key: 's3Prefix',
    env: 'HEARTH_S3_PREFIX',
    flag: '--s3-prefix',
    describe: 'Folder in the bucket that every object key is stored under',
    parse: s3Prefix,
    fallback: () => undefined,
  }),
  setting({
    key: 'roles',
    env: 'HEARTH_ROLES',
    flag: '--roles',
    describe: 'Comma-separated roles this process serves: api, gateway, media (default: all)',
    parse: roles,
    fallback: () => new Set(['api', 'gateway', 'media'] as const),
  }),
  setting({
    key: 'voiceAnnouncedAddresses',
    env: 'HEARTH_VOICE_ANNOUNCED_ADDRESSES',
    flag: '--voice-announced-addresses',
    describe: 'Comma-separated public IPv4 addresses announced as extra media host candidates (1:1 NAT)',
    parse: list,
    fallback: () => [],
  }),
  setting({
    key: 'voicePortRange',
    env: 'HEARTH_VOICE_PORT_RANGE',
    flag: '--voice-port-range',
    describe: 'UDP port range for voice media, "min-max" (default: ephemeral ports)',
    parse: portRange,
    fallback: () => undefined,
  }),
  setting({
    key: 'voiceTurnUrls',
    env: 'HEARTH_VOICE_TURN_URLS',
    flag: '--voice-turn-urls',
    describe: 'Comma-separated stun:/turn:/turns: URLs given to the SFU and to voice clients',
    parse: turnUrls,
    fallback: () => [],
  }),
  setting({
    key: 'voiceTurnUsername',
    env: 'HEARTH_VOICE_TURN_USERNAME',
    flag: '--voice-turn-username',
    describe: 'Username for the TURN servers',
    parse: optionalText,
    fallback: () => undefined,
  }),
  setting({
    key: 'voiceTurnCredential',
    env: 'HEARTH_VOICE_TURN_CREDENTIAL',
    flag: '--voice-turn-credential',
    describe: 'Credential (password) for the TURN servers',
    parse: optionalText,
    fallback: () => undefined,
  }),
  setting({
    key: 'voiceRingTimeoutMs',
    env: 'HEARTH_VOICE_RING_TIMEOUT_MS',
    flag: '--voice-ring-timeout-ms',
    describe: 'How long a DM or group-DM call rings an unanswering recipient, in ms (default 60000)',
    parse: integer(1000, 600_000),
    fallback: () => 60_000,
  }),
  setting({
    key: 'workerId',
    env: 'HEARTH_WORKER_ID',
    flag: '--worker-id',
    describe: 'Snowflake worker id (0–1023); give every process of a deployment its own',
    parse: integer(0, 1023),
    fallback: () => 0,
  }),
  setting({
    key: 'logLevel',
    env: 'HEARTH_LOG_LEVEL',
    flag: '--log-level',
    describe: 'debug, info, warn, error or silent',
    parse: logLevel,
    fallback: () => 'info',
  }),
  setting({
    key: 'logFormat',
    env: 'HEARTH_LOG_FORMAT',
    flag: '--log-format',
    describe: 'json (one JSON object per line) or pretty (one human-readable line per event, for development)',
    parse: (raw) => {
      if (raw !== 'json' && raw !== 'pretty') throw new ConfigError('must be json or pretty');
      return raw;
    },
    fallback: () => 'json' as const,
  }),
  setting({
    key: 'metricsToken',
    env: 'HEARTH_METRICS_TOKEN',
    flag: '--metrics-token',
    describe: 'Bearer token for Prometheus metrics at /metrics on the main port (≥32 chars; unset = not served there)',
    parse: secret,
    fallback: () => undefined,
  }),
  setting({
    key: 'metricsPort',
    env: 'HEARTH_METRICS_PORT',
    flag: '--metrics-port',
    describe: 'Separate port serving only /metrics, without a token (unset = none); bind it privately',
    parse: integer(0, 65535),
    fallback: () => undefined,
  }),
  setting({
    key: 'metricsHost',
    env: 'HEARTH_METRICS_HOST',
    flag: '--metrics-host',
    describe: 'Address the metrics port listens on',
    parse: text,
    fallback: () => '127.0.0.1',
  }),
] as const;

/** Reads `--flag value`, `--flag=value` and bare boolean `--flag`. */
function parseArgv(argv: readonly string[]): Map<string, string> {
  const byFlag = new Map<string, string>();
  const known = new Set(SETTINGS.map((s) => s.flag as string));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    if (!known.has(flag)) throw new ConfigError(`unknown option ${flag}`);
    if (eq !== -1) byFlag.set(flag, arg.slice(eq + 1));
    else if (i + 1 < argv.length && !(argv[i + 1] as string).startsWith('--')) byFlag.set(flag, argv[++i] as string);
    else byFlag.set(flag, 'true');
  }
  return byFlag;
}

/** Builds the configuration; a bad value throws a `ConfigError` whose message names the setting. */
export function loadConfig(env: Record<string, string | undefined>, argv: readonly string[] = []): Config {
  const flags = parseArgv(argv);
  const partial: Partial<Config> = {};
  const raw: Record<string, string | undefined> = {};
  for (const s of SETTINGS) {
    const value = flags.get(s.flag) ?? env[s.env];
    raw[s.env] = value;
    try {
      (partial as Record<string, unknown>)[s.key] = value === undefined ? s.fallback(partial, raw) : s.parse(value);
    } catch (error) {
      const source = flags.has(s.flag) ? s.flag : s.env;
      throw new ConfigError(`${source}: ${(error as Error).message}`);
    }
  }
  const config = partial as Config;
  if (config.testMode && !config.testToken)
    throw new ConfigError('HEARTH_TEST_TOKEN: must be set when HEARTH_TEST_MODE is on');
  checkCaptcha(config);
  checkS3(config);
  if (config.databaseReplicaUrl && !config.databaseUrl)
    throw new ConfigError('DATABASE_REPLICA_URL: needs DATABASE_URL (the embedded database has no replica)');
  return config;
}

/** A configured provider needs its secret and the site key clients load the widget with. */
function checkCaptcha(config: Config): void {
  const provider = config.captchaProvider;
  if (provider === 'none') return;
  if (!config.captchaSecret)
    throw new ConfigError(`HEARTH_CAPTCHA_SECRET: must be set when HEARTH_CAPTCHA_PROVIDER is ${provider}`);
  const siteKey = provider === 'hcaptcha' ? config.hcaptchaSiteKey : config.turnstileSiteKey;
  const siteKeyEnv = provider === 'hcaptcha' ? 'HEARTH_HCAPTCHA_SITE_KEY' : 'HEARTH_TURNSTILE_SITE_KEY';
  if (!siteKey) throw new ConfigError(`${siteKeyEnv}: must be set when HEARTH_CAPTCHA_PROVIDER is ${provider}`);
}

/** A bucket needs both keys; the other S3 settings without a bucket would be silently ignored. */
function checkS3(config: Config): void {
  if (config.s3Bucket) {
    if (!config.s3AccessKeyId)
      throw new ConfigError('HEARTH_S3_ACCESS_KEY_ID: must be set when HEARTH_S3_BUCKET is set');
    if (!config.s3SecretAccessKey)
      throw new ConfigError('HEARTH_S3_SECRET_ACCESS_KEY: must be set when HEARTH_S3_BUCKET is set');
    return;
  }
  const stray = (
    [
      ['HEARTH_S3_ENDPOINT', config.s3Endpoint],
      ['HEARTH_S3_ACCESS_KEY_ID', config.s3AccessKeyId],
      ['HEARTH_S3_SECRET_ACCESS_KEY', config.s3SecretAccessKey],
      ['HEARTH_S3_PREFIX', config.s3Prefix],
    ] as const
  ).find(([, value]) => value !== undefined);
  if (stray) throw new ConfigError(`HEARTH_S3_BUCKET: must be set when ${stray[0]} is set`);
}
