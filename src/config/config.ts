import { parseArgs } from 'node:util';
import { z } from 'zod';
import { type Cidr, parseCidrList } from '../platform/net/cidr.ts';
import { isSafeKey } from '../platform/storage/object-store.ts';

/** A setting's value arrives as text (an environment variable or a flag) and leaves typed. */
type FromText<T> = z.ZodType<T, string>;

const invalid = (ctx: z.RefinementCtx, message: string): never => {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
};

const integer = (min: number, max: number): FromText<number> => {
  const range = { error: (issue: { input?: unknown }) => `must be between ${min} and ${max}, got ${issue.input}` };
  return z
    .string()
    .regex(/^\s*-?\d+\s*$/, { error: (issue) => `must be an integer, got "${issue.input}"` })
    .transform(Number)
    .pipe(z.number().min(min, range).max(max, range));
};

const boolean: FromText<boolean> = z
  .string()
  .trim()
  .pipe(
    z.stringbool({
      truthy: ['1', 'true', 'yes', 'on'],
      falsy: ['0', 'false', 'no', 'off', ''],
      error: (issue) => `must be a boolean (1/0, true/false), got "${issue.input}"`,
    }),
  );

const text: FromText<string> = z.string();
const optionalText: FromText<string | undefined> = z.string().transform((raw) => (raw === '' ? undefined : raw));

const oneOf = <const T extends readonly [string, ...string[]]>(
  values: T,
  message: (input: unknown) => string = (input) => `must be one of ${values.join(', ')}, got "${input}"`,
) => z.enum(values, { error: (issue) => message(issue.input) });

const httpUrl: FromText<string> = z.string().transform((raw, ctx) => {
  if (!URL.canParse(raw)) return invalid(ctx, `must be an absolute URL, got "${raw}"`);
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return invalid(ctx, 'must use http or https');
  return url.origin + url.pathname.replace(/\/+$/, '');
});

const urlWithSchemes = (...schemes: string[]): FromText<string | undefined> =>
  z.string().transform((raw, ctx) => {
    if (raw === '') return undefined;
    if (!URL.canParse(raw)) return invalid(ctx, 'must be a URL');
    if (!schemes.includes(new URL(raw).protocol)) return invalid(ctx, `must use ${schemes.join(' or ')}`);
    return raw;
  });

const list: FromText<string[]> = z.string().transform((raw) =>
  raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
);

/** `host:port` or `redis(s)://[user:password@]host:port`, each normalised to a URL. */
const redisNodes: FromText<string[]> = list.transform((entries, ctx) => {
  const nodes: string[] = [];
  for (const entry of entries) {
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `redis://${entry}`;
    if (!URL.canParse(withScheme)) return invalid(ctx, `"${entry}" is not host:port or a redis:// URL`);
    const url = new URL(withScheme);
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
      return invalid(ctx, `"${entry}" must use redis: or rediss:`);
    if (!url.hostname || !url.port) return invalid(ctx, `"${entry}" needs a host and a port`);
    nodes.push(withScheme);
  }
  return nodes;
});

const cidrs: FromText<Cidr[]> = z.string().transform((raw, ctx) => {
  try {
    return parseCidrList(raw);
  } catch (error) {
    return invalid(ctx, (error as Error).message);
  }
});

const secret: FromText<string | undefined> = z
  .string()
  .refine((raw) => raw === '' || raw.length >= 32, 'must be at least 32 characters')
  .transform((raw) => (raw === '' ? undefined : raw));

const rateLimitBucket = z.object({ limit: z.number().int().min(1), windowSeconds: z.number().finite() });
const rateLimits: FromText<Record<string, z.output<typeof rateLimitBucket>>> = z.string().transform((raw, ctx) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return invalid(ctx, 'must be a JSON object like {"auth:login":{"limit":10,"windowSeconds":10}}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return invalid(ctx, 'must be a JSON object');
  const out: Record<string, z.output<typeof rateLimitBucket>> = {};
  for (const [bucket, value] of Object.entries(parsed)) {
    const checked = rateLimitBucket.safeParse(value);
    if (!checked.success)
      return invalid(ctx, `bucket "${bucket}" needs an integer limit ≥ 1 and a numeric windowSeconds`);
    out[bucket] = { limit: checked.data.limit, windowSeconds: checked.data.windowSeconds };
  }
  return out;
});

export const CAPTCHA_PROVIDERS = ['none', 'hcaptcha', 'turnstile'] as const;
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number];

const CAPTCHA_VERIFY_URLS: Record<Exclude<CaptchaProvider, 'none'>, string> = {
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
};

const ROLES = ['api', 'gateway', 'media', 'voice'] as const;
const roles: FromText<Set<(typeof ROLES)[number]>> = list.pipe(
  z
    .array(oneOf(ROLES, (role) => `unknown role "${role}" (api, gateway, media, voice)`))
    .min(1, 'needs at least one role')
    .transform((values) => new Set(values)),
);

const voiceEndpointUrl: FromText<string | undefined> = z.string().transform((raw, ctx) => {
  if (raw === '') return undefined;
  if (!URL.canParse(raw)) return invalid(ctx, 'must be a ws:// or wss:// URL');
  const protocol = new URL(raw).protocol;
  if (protocol !== 'ws:' && protocol !== 'wss:') return invalid(ctx, 'must be a ws:// or wss:// URL');
  return raw.replace(/\/+$/, '');
});

const portRange: FromText<[number, number] | undefined> = z.string().transform((raw, ctx) => {
  if (raw === '') return undefined;
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(raw);
  const min = Number(match?.[1]);
  const max = Number(match?.[2]);
  if (!match || min < 1024 || max > 65535 || min >= max) return invalid(ctx, 'must be "min-max" within 1024-65535');
  return [min, max] as [number, number];
});

const turnUrls: FromText<string[]> = list.pipe(
  z.array(
    z
      .string()
      .regex(/^(stun|turns?):[^\s]+$/, { error: (issue) => `"${issue.input}" is not a stun:, turn: or turns: URL` }),
  ),
);

const s3Bucket: FromText<string | undefined> = z.string().transform((raw, ctx) => {
  if (raw === '') return undefined;
  // Loose on purpose: S3-compatible services differ on the rules; this only keeps the name one path segment.
  if (!/^[A-Za-z0-9._-]{1,255}$/.test(raw)) return invalid(ctx, 'must be a bucket name (letters, digits, . _ -)');
  return raw;
});

const s3Endpoint: FromText<string | undefined> = urlWithSchemes('http:', 'https:').refine(
  // The endpoint is logged at start; credentials belong in the key settings, never in the URL.
  (value) => !value || (!new URL(value).username && !new URL(value).password),
  'must not contain credentials (use HEARTH_S3_ACCESS_KEY_ID and HEARTH_S3_SECRET_ACCESS_KEY)',
);

const s3Prefix: FromText<string | undefined> = z.string().transform((raw, ctx) => {
  const value = raw.replace(/^\/+|\/+$/g, '');
  if (value === '') return undefined;
  if (!isSafeKey(value)) return invalid(ctx, 'must be slash-separated names without empty, . or .. segments');
  return value;
});

const nonEmpty: FromText<string> = z.string().trim().min(1, 'must not be empty');

/**
 * Every setting the server reads, as a zod schema from its text to its typed value: `Config` is derived from it.
 * `SETTINGS` below gives each its environment variable, CLI flag, description and default. `loadConfig` is pure:
 * the entrypoint hands it the environment and argv, so nothing else in the code base reads `process.env`.
 */
export const CONFIG_SCHEMA = z.object({
  port: integer(0, 65535),
  host: text,
  dataDir: text,
  databaseUrl: urlWithSchemes('postgres:', 'postgresql:'),
  /** A streaming replica for reads that tolerate lag (docs/deployment.md#read-replica); needs `databaseUrl`. */
  databaseReplicaUrl: urlWithSchemes('postgres:', 'postgresql:'),
  redisUrl: urlWithSchemes('redis:', 'rediss:'),
  /**
   * Seed nodes of a Redis/Valkey cluster (`redis://[user:password@]host:port`, `rediss://` for TLS), instead of
   * `redisUrl` (docs/deployment.md#redis-cluster); empty = no cluster.
   */
  redisClusterNodes: redisNodes,
  redisPrefix: text,
  smtpUrl: urlWithSchemes('smtp:', 'smtps:'),
  smtpFrom: text,
  publicUrl: httpUrl,
  webappUrl: httpUrl,
  trustedProxies: cidrs,
  corsOrigins: list,
  testMode: boolean,
  testToken: optionalText,
  sudoSecret: secret,
  mediaProxySecret: secret,
  relaySecret: secret,
  mfaSecret: secret,
  ipBanFailures: integer(0, 1_000_000),
  ipBanWindowSeconds: integer(1, 86_400 * 30),
  ipBanDurationSeconds: integer(1, 86_400 * 365),
  ipBanExempt: cidrs,
  ipAuthorization: boolean,
  rateLimitOverrides: rateLimits,
  gatewayResumeWindowMs: integer(1000, 3_600_000),
  /** Instance settings and manual IP bans are read again from the database this often. */
  settingsReloadSeconds: integer(1, 86_400),
  /** Time a client has to send its request headers. */
  httpHeadersTimeoutMs: integer(500, 600_000),
  /** Time a client has to send a whole request, body included. */
  httpRequestTimeoutMs: integer(1000, 3_600_000),
  /** A socket silent this long (mid-headers, mid-body, or idle between requests) is closed. */
  httpIdleTimeoutMs: integer(500, 600_000),
  adminOAuth2ClientSecret: optionalText,
  adminOAuth2RedirectUris: list,
  webauthnRpId: text,
  webauthnOrigins: list,
  mediaAllowPrivateTargets: boolean,
  /** Total bytes of the media proxy's entries (external media, resized images) in the shared object store (docs/media.md#external-media-cache). */
  mediaExternalCacheBytes: integer(0, 2 ** 50),
  captchaProvider: oneOf(CAPTCHA_PROVIDERS),
  captchaSecret: optionalText,
  hcaptchaSiteKey: optionalText,
  turnstileSiteKey: optionalText,
  /** Unset only while the provider is `none`. */
  captchaVerifyUrl: urlWithSchemes('http:', 'https:'),
  captchaTimeoutMs: integer(100, 60_000),
  /** Requests in flight at once to one application's interactions endpoint (docs/bots.md). */
  interactionsEndpointConcurrency: integer(1, 1000),
  /** Unset = objects on the local filesystem under the data directory. */
  s3Bucket,
  s3Endpoint,
  s3Region: nonEmpty,
  s3AccessKeyId: optionalText,
  s3SecretAccessKey: optionalText,
  s3ForcePathStyle: boolean,
  s3Prefix,
  roles,
  /** Voice media (docs/voice.md): extra announced addresses, UDP port range, TURN servers. */
  voiceAnnouncedAddresses: list,
  voicePortRange: portRange,
  voiceTurnUrls: turnUrls,
  voiceTurnUsername: optionalText,
  voiceTurnCredential: optionalText,
  /** The signalling WebSocket URL this voice node announces (docs/voice.md#the-voice-role); unset: public URL + /voice. */
  voiceEndpoint: voiceEndpointUrl,
  /** How long a voice node's announcement lives without a heartbeat (docs/voice.md#the-voice-role). */
  voiceNodeTtlSeconds: integer(3, 300),
  /** How long a DM or group-DM call rings someone who neither accepts nor declines (docs/voice.md). */
  voiceRingTimeoutMs: integer(1000, 600_000),
  workerId: integer(0, 1023),
  /** The local object directory (`<data dir>/objects`) is one directory shared by every node. */
  sharedObjectDir: boolean,
  logLevel: oneOf(['debug', 'info', 'warn', 'error', 'silent']),
  /** `json`: one JSON object per line (production); `pretty`: one human line per event (development). */
  logFormat: oneOf(['json', 'pretty'], () => 'must be json or pretty'),
  /** `commit`: the embedded database syncs every commit to disk; `off`: PGlite's default (no fsync). */
  pgliteSync: oneOf(['commit', 'off'], () => 'must be commit or off'),
  /** Bearer token that opens `GET /metrics` on the main port; unset = not served there. */
  metricsToken: secret,
  /** A separate port serving only `/metrics` without a token; unset = none. */
  metricsPort: integer(0, 65535).optional(),
  metricsHost: text,
});

export type Config = z.output<typeof CONFIG_SCHEMA>;

export class ConfigError extends Error {}

interface Setting<K extends keyof Config> {
  key: K;
  env: string;
  flag: string;
  describe: string;
  /** The value when neither the variable nor the flag is given; may depend on settings listed before it. */
  fallback: (partial: Partial<Config>) => Config[K];
}

function setting<K extends keyof Config>(s: Setting<K>): Setting<K> {
  return s;
}

export const SETTINGS = [
  setting({
    key: 'port',
    env: 'PORT',
    flag: '--port',
    describe: 'HTTP port',
    fallback: () => 8080,
  }),
  setting({
    key: 'host',
    env: 'HOST',
    flag: '--host',
    describe: 'Address to listen on',
    fallback: () => '0.0.0.0',
  }),
  setting({
    key: 'dataDir',
    env: 'HEARTH_DATA_DIR',
    flag: '--data-dir',
    describe: 'Directory for the embedded database, generated secrets and uploads',
    fallback: () => './data',
  }),
  setting({
    key: 'databaseUrl',
    env: 'DATABASE_URL',
    flag: '--database-url',
    describe: 'PostgreSQL connection string; unset = embedded PGlite in the data directory',
    fallback: () => undefined,
  }),
  setting({
    key: 'databaseReplicaUrl',
    env: 'DATABASE_REPLICA_URL',
    flag: '--database-replica-url',
    describe: 'A PostgreSQL streaming replica for reads that tolerate lag (message search); needs DATABASE_URL',
    fallback: () => undefined,
  }),
  setting({
    key: 'pgliteSync',
    env: 'HEARTH_PGLITE_SYNC',
    flag: '--pglite-sync',
    describe:
      'Embedded database durability: commit (every commit synced to disk before it is acknowledged) or off (faster; survives a killed process, not a power cut)',
    fallback: () => 'commit' as const,
  }),
  setting({
    key: 'redisUrl',
    env: 'REDIS_URL',
    flag: '--redis-url',
    describe: 'Redis/Valkey URL for shared state; unset = in-process state',
    fallback: () => undefined,
  }),
  setting({
    key: 'redisClusterNodes',
    env: 'REDIS_CLUSTER_NODES',
    flag: '--redis-cluster-nodes',
    describe:
      'Redis/Valkey cluster seed nodes for shared state, comma-separated host:port or redis(s)://[user:password@]host:port (instead of REDIS_URL)',
    fallback: () => [],
  }),
  setting({
    key: 'redisPrefix',
    env: 'HEARTH_REDIS_PREFIX',
    flag: '--redis-prefix',
    describe: 'Prefix of every Redis key and channel (several deployments can share one Redis)',
    fallback: () => 'hearth:',
  }),
  setting({
    key: 'smtpUrl',
    env: 'SMTP_URL',
    flag: '--smtp-url',
    describe: 'SMTP server URL (smtp:// or smtps://); unset = emails are not sent (captured in test mode)',
    fallback: () => undefined,
  }),
  setting({
    key: 'publicUrl',
    env: 'HEARTH_PUBLIC_URL',
    flag: '--public-url',
    describe: 'Public base URL that discovery announces',
    fallback: (partial) => `http://localhost:${partial.port ?? 8080}`,
  }),
  setting({
    key: 'smtpFrom',
    env: 'SMTP_FROM',
    flag: '--smtp-from',
    describe: "Sender address of outgoing email (default: no-reply at the public URL's host)",
    fallback: (partial) => `Hearth <no-reply@${new URL(partial.publicUrl ?? 'http://localhost').hostname}>`,
  }),
  setting({
    key: 'webappUrl',
    env: 'HEARTH_WEBAPP_URL',
    flag: '--webapp-url',
    describe: 'Base URL of the web client; emailed links point here (default: the public URL)',
    fallback: (partial) => partial.publicUrl ?? 'http://localhost:8080',
  }),
  setting({
    key: 'trustedProxies',
    env: 'HEARTH_TRUSTED_PROXIES',
    flag: '--trusted-proxies',
    describe: 'Comma-separated CIDRs of reverse proxies whose X-Forwarded-For is trusted',
    fallback: () => [],
  }),
  setting({
    key: 'corsOrigins',
    env: 'HEARTH_CORS_ORIGINS',
    flag: '--cors-origins',
    describe: 'Comma-separated origins allowed by CORS (default: the web app origin)',
    fallback: (partial) => [new URL(partial.webappUrl ?? 'http://localhost:8080').origin],
  }),
  setting({
    key: 'testMode',
    env: 'HEARTH_TEST_MODE',
    flag: '--test-mode',
    describe: 'Enables the /test harness',
    fallback: () => false,
  }),
  setting({
    key: 'testToken',
    env: 'HEARTH_TEST_TOKEN',
    flag: '--test-token',
    describe: 'Value of X-Test-Token that the test harness requires',
    fallback: () => undefined,
  }),
  setting({
    key: 'sudoSecret',
    env: 'HEARTH_SUDO_SECRET',
    flag: '--sudo-secret',
    describe:
      'HS256 secret for sudo-mode proofs, and the key of the check part inside session and bot tokens (≥32 chars; generated into the data directory if unset; changing it signs every session and bot out)',
    fallback: () => undefined,
  }),
  setting({
    key: 'mediaProxySecret',
    env: 'HEARTH_MEDIA_PROXY_SECRET',
    flag: '--media-proxy-secret',
    describe: 'HMAC secret for signed external media paths (generated into the data directory if unset)',
    fallback: () => undefined,
  }),
  setting({
    key: 'relaySecret',
    env: 'HEARTH_RELAY_SECRET',
    flag: '--relay-secret',
    describe: 'HMAC secret for upload capabilities (generated into the data directory if unset)',
    fallback: () => undefined,
  }),
  setting({
    key: 'mfaSecret',
    env: 'HEARTH_MFA_SECRET',
    flag: '--mfa-secret',
    describe:
      'Key material for encrypting TOTP secrets, the SSO client secret and the OpenID Connect signing keys at rest (generated into the data directory if unset; keep it: changing it disables TOTP and makes a new signing key)',
    fallback: () => undefined,
  }),
  setting({
    key: 'ipBanFailures',
    env: 'HEARTH_IP_BAN_FAILURES',
    flag: '--ip-ban-failures',
    describe: 'Authentication failures per IP within the window that trigger a ban (0 disables)',
    fallback: () => 50,
  }),
  setting({
    key: 'ipBanWindowSeconds',
    env: 'HEARTH_IP_BAN_WINDOW_S',
    flag: '--ip-ban-window',
    describe: 'Sliding window for counting failures, seconds',
    fallback: () => 600,
  }),
  setting({
    key: 'ipBanDurationSeconds',
    env: 'HEARTH_IP_BAN_DURATION_S',
    flag: '--ip-ban-duration',
    describe: 'How long an automatic ban lasts, seconds',
    fallback: () => 3600,
  }),
  setting({
    key: 'ipBanExempt',
    env: 'HEARTH_IP_BAN_EXEMPT',
    flag: '--ip-ban-exempt',
    describe: 'Comma-separated CIDRs never banned automatically',
    fallback: () => [],
  }),
  setting({
    key: 'sharedObjectDir',
    env: 'HEARTH_SHARED_OBJECT_DIR',
    flag: '--shared-object-dir',
    describe:
      'Declare <data dir>/objects one directory shared by every process (else a second process on the same database is refused unless HEARTH_S3_BUCKET is set)',
    fallback: () => false,
  }),
  setting({
    key: 'ipAuthorization',
    env: 'HEARTH_IP_AUTHORIZATION',
    flag: '--ip-authorization',
    describe: 'Require emailed approval for logins from new addresses (needs SMTP, or test mode)',
    fallback: () => true,
  }),
  setting({
    key: 'rateLimitOverrides',
    env: 'HEARTH_RATE_LIMITS',
    flag: '--rate-limits',
    describe: 'JSON object overriding route buckets: {"<bucket>":{"limit":N,"windowSeconds":S}}',
    fallback: () => ({}),
  }),
  setting({
    key: 'gatewayResumeWindowMs',
    env: 'HEARTH_GATEWAY_RESUME_WINDOW_MS',
    flag: '--gateway-resume-window-ms',
    describe: 'How long a closed gateway session can be resumed (default 60000; 10000 in test mode)',
    fallback: (partial) => (partial.testMode ? 10_000 : 60_000),
  }),
  setting({
    key: 'settingsReloadSeconds',
    env: 'HEARTH_SETTINGS_RELOAD_S',
    flag: '--settings-reload',
    describe:
      'Instance settings and manual IP bans are read again from the database this often, seconds (besides at once on every change and after a Redis reconnect)',
    fallback: () => 60,
  }),
  setting({
    key: 'httpHeadersTimeoutMs',
    env: 'HEARTH_HTTP_HEADERS_TIMEOUT_MS',
    flag: '--http-headers-timeout-ms',
    describe: 'Time a client has to send its request headers (default 20000)',
    fallback: () => 20_000,
  }),
  setting({
    key: 'httpRequestTimeoutMs',
    env: 'HEARTH_HTTP_REQUEST_TIMEOUT_MS',
    flag: '--http-request-timeout-ms',
    describe: 'Time a client has to send a whole request, body included (default 300000)',
    fallback: () => 300_000,
  }),
  setting({
    key: 'httpIdleTimeoutMs',
    env: 'HEARTH_HTTP_IDLE_TIMEOUT_MS',
    flag: '--http-idle-timeout-ms',
    describe: 'A socket that sends nothing this long, mid-request or between requests, is closed (default 30000)',
    fallback: () => 30_000,
  }),
  setting({
    key: 'adminOAuth2ClientSecret',
    env: 'HEARTH_ADMIN_OAUTH2_CLIENT_SECRET',
    flag: '--admin-oauth2-client-secret',
    describe: 'Client secret of the built-in Admin OAuth2 application (else generated by the bootstrap CLI)',
    fallback: () => undefined,
  }),
  setting({
    key: 'adminOAuth2RedirectUris',
    env: 'HEARTH_ADMIN_OAUTH2_REDIRECT_URIS',
    flag: '--admin-oauth2-redirect-uris',
    describe: 'Comma-separated redirect URIs of the built-in Admin OAuth2 application',
    fallback: (partial) => [`${partial.publicUrl ?? 'http://localhost:8080'}/admin/oauth2/callback`],
  }),
  setting({
    key: 'webauthnRpId',
    env: 'HEARTH_WEBAUTHN_RP_ID',
    flag: '--webauthn-rp-id',
    describe: 'WebAuthn relying-party ID (default: the web app host name)',
    fallback: (partial) => new URL(partial.webappUrl ?? 'http://localhost:8080').hostname,
  }),
  setting({
    key: 'webauthnOrigins',
    env: 'HEARTH_WEBAUTHN_ORIGINS',
    flag: '--webauthn-origins',
    describe: 'Comma-separated origins accepted in WebAuthn responses (default: the web app origin)',
    fallback: (partial) => [new URL(partial.webappUrl ?? 'http://localhost:8080').origin],
  }),
  setting({
    key: 'mediaAllowPrivateTargets',
    env: 'HEARTH_MEDIA_ALLOW_PRIVATE',
    flag: '--media-allow-private',
    describe: 'Let the media proxy fetch private, loopback and link-local addresses (SSRF guard off)',
    fallback: () => false,
  }),
  setting({
    key: 'mediaExternalCacheBytes',
    env: 'HEARTH_MEDIA_EXTERNAL_CACHE_BYTES',
    flag: '--media-external-cache-bytes',
    describe:
      'Total bytes of fetched external media and resized images kept in the shared object store; past it the oldest entries are removed first (0 = none kept there)',
    fallback: () => 1024 ** 3,
  }),
  setting({
    key: 'captchaProvider',
    env: 'HEARTH_CAPTCHA_PROVIDER',
    flag: '--captcha-provider',
    describe: 'CAPTCHA on register, login and forgot-password: none, hcaptcha or turnstile',
    fallback: () => 'none',
  }),
  setting({
    key: 'captchaSecret',
    env: 'HEARTH_CAPTCHA_SECRET',
    flag: '--captcha-secret',
    describe: "Secret key of the CAPTCHA provider's siteverify API (required unless the provider is none)",
    fallback: () => undefined,
  }),
  setting({
    key: 'hcaptchaSiteKey',
    env: 'HEARTH_HCAPTCHA_SITE_KEY',
    flag: '--hcaptcha-site-key',
    describe: 'hCaptcha site key that discovery announces (required with the hcaptcha provider)',
    fallback: () => undefined,
  }),
  setting({
    key: 'turnstileSiteKey',
    env: 'HEARTH_TURNSTILE_SITE_KEY',
    flag: '--turnstile-site-key',
    describe: 'Cloudflare Turnstile site key that discovery announces (required with the turnstile provider)',
    fallback: () => undefined,
  }),
  setting({
    key: 'captchaVerifyUrl',
    env: 'HEARTH_CAPTCHA_VERIFY_URL',
    flag: '--captcha-verify-url',
    describe: "Overrides the provider's siteverify URL (default: the provider's own)",
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
    fallback: () => 5000,
  }),
  setting({
    key: 'interactionsEndpointConcurrency',
    env: 'HEARTH_INTERACTIONS_ENDPOINT_CONCURRENCY',
    flag: '--interactions-endpoint-concurrency',
    describe: "Requests in flight at once to one application's interactions endpoint URL; an interaction over it fails",
    fallback: () => 25,
  }),
  setting({
    key: 's3Bucket',
    env: 'HEARTH_S3_BUCKET',
    flag: '--s3-bucket',
    describe: 'S3-compatible bucket for uploaded objects; unset = the local filesystem (<data dir>/objects)',
    fallback: () => undefined,
  }),
  setting({
    key: 's3Endpoint',
    env: 'HEARTH_S3_ENDPOINT',
    flag: '--s3-endpoint',
    describe: 'S3 API URL (MinIO, Garage, Ceph RGW, R2…); unset = AWS for the region',
    fallback: () => undefined,
  }),
  setting({
    key: 's3Region',
    env: 'HEARTH_S3_REGION',
    flag: '--s3-region',
    describe: 'Region the S3 requests are signed for',
    fallback: () => 'us-east-1',
  }),
  setting({
    key: 's3AccessKeyId',
    env: 'HEARTH_S3_ACCESS_KEY_ID',
    flag: '--s3-access-key-id',
    describe: 'S3 access key id (required with a bucket)',
    fallback: () => undefined,
  }),
  setting({
    key: 's3SecretAccessKey',
    env: 'HEARTH_S3_SECRET_ACCESS_KEY',
    flag: '--s3-secret-access-key',
    describe: 'S3 secret access key (required with a bucket; never logged)',
    fallback: () => undefined,
  }),
  setting({
    key: 's3ForcePathStyle',
    env: 'HEARTH_S3_FORCE_PATH_STYLE',
    flag: '--s3-force-path-style',
    describe: 'Address the bucket as <endpoint>/<bucket> instead of <bucket>.<endpoint host>',
    fallback: () => false,
  }),
  setting({
    key: 's3Prefix',
    env: 'HEARTH_S3_PREFIX',
    flag: '--s3-prefix',
    describe: 'Folder in the bucket that every object key is stored under',
    fallback: () => undefined,
  }),
  setting({
    key: 'roles',
    env: 'HEARTH_ROLES',
    flag: '--roles',
    describe: 'Comma-separated roles this process serves: api, gateway, media, voice (default: all)',
    fallback: () => new Set(['api', 'gateway', 'media', 'voice'] as const),
  }),
  setting({
    key: 'voiceAnnouncedAddresses',
    env: 'HEARTH_VOICE_ANNOUNCED_ADDRESSES',
    flag: '--voice-announced-addresses',
    describe: 'Comma-separated public IPv4 addresses announced as extra media host candidates (1:1 NAT)',
    fallback: () => [],
  }),
  setting({
    key: 'voicePortRange',
    env: 'HEARTH_VOICE_PORT_RANGE',
    flag: '--voice-port-range',
    describe: 'UDP port range for voice media, "min-max" (default: ephemeral ports)',
    fallback: () => undefined,
  }),
  setting({
    key: 'voiceTurnUrls',
    env: 'HEARTH_VOICE_TURN_URLS',
    flag: '--voice-turn-urls',
    describe: 'Comma-separated stun:/turn:/turns: URLs given to the SFU and to voice clients',
    fallback: () => [],
  }),
  setting({
    key: 'voiceTurnUsername',
    env: 'HEARTH_VOICE_TURN_USERNAME',
    flag: '--voice-turn-username',
    describe: 'Username for the TURN servers',
    fallback: () => undefined,
  }),
  setting({
    key: 'voiceTurnCredential',
    env: 'HEARTH_VOICE_TURN_CREDENTIAL',
    flag: '--voice-turn-credential',
    describe: 'Credential (password) for the TURN servers',
    fallback: () => undefined,
  }),
  setting({
    key: 'voiceEndpoint',
    env: 'HEARTH_VOICE_ENDPOINT',
    flag: '--voice-endpoint',
    describe: "Public ws:// or wss:// URL of this voice node's signalling socket (default: the public URL + /voice)",
    fallback: () => undefined,
  }),
  setting({
    key: 'voiceNodeTtlSeconds',
    env: 'HEARTH_VOICE_NODE_TTL_S',
    flag: '--voice-node-ttl-s',
    describe: 'Seconds a voice node stays announced without a heartbeat (sent every third of it); default 15',
    fallback: () => 15,
  }),
  setting({
    key: 'voiceRingTimeoutMs',
    env: 'HEARTH_VOICE_RING_TIMEOUT_MS',
    flag: '--voice-ring-timeout-ms',
    describe: 'How long a DM or group-DM call rings an unanswering recipient, in ms (default 60000)',
    fallback: () => 60_000,
  }),
  setting({
    key: 'workerId',
    env: 'HEARTH_WORKER_ID',
    flag: '--worker-id',
    describe: 'Snowflake worker id (0–1023); give every process of a deployment its own',
    fallback: () => 0,
  }),
  setting({
    key: 'logLevel',
    env: 'HEARTH_LOG_LEVEL',
    flag: '--log-level',
    describe: 'debug, info, warn, error or silent',
    fallback: () => 'info',
  }),
  setting({
    key: 'logFormat',
    env: 'HEARTH_LOG_FORMAT',
    flag: '--log-format',
    describe: 'json (one JSON object per line) or pretty (one human-readable line per event, for development)',
    fallback: () => 'json' as const,
  }),
  setting({
    key: 'metricsToken',
    env: 'HEARTH_METRICS_TOKEN',
    flag: '--metrics-token',
    describe: 'Bearer token for Prometheus metrics at /metrics on the main port (≥32 chars; unset = not served there)',
    fallback: () => undefined,
  }),
  setting({
    key: 'metricsPort',
    env: 'HEARTH_METRICS_PORT',
    flag: '--metrics-port',
    describe: 'Separate port serving only /metrics, without a token (unset = none); bind it privately',
    fallback: () => undefined,
  }),
  setting({
    key: 'metricsHost',
    env: 'HEARTH_METRICS_HOST',
    flag: '--metrics-host',
    describe: 'Address the metrics port listens on',
    fallback: () => '127.0.0.1',
  }),
] as const;

/**
 * Reads `--flag value`, `--flag=value` and bare boolean `--flag` with `node:util` `parseArgs`. Every flag is
 * declared as a boolean so that parseArgs only splits the command line into tokens and never takes a value of its
 * own: a flag's value is the next argument when it does not start with `--`, else the flag is bare (`'true'`),
 * whatever the setting's type; the setting's schema then judges the text.
 */
function parseArgv(argv: readonly string[]): Map<string, string> {
  const options = Object.fromEntries(SETTINGS.map((s) => [s.flag.slice(2), { type: 'boolean' as const }]));
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const known = new Set(SETTINGS.map((s) => s.flag as string));
  const byFlag = new Map<string, string>();
  let waiting: string | undefined;
  let taken = -1;
  for (const token of tokens) {
    // A short group (`-abc`) is several tokens of one argument.
    if (token.index === taken) continue;
    taken = token.index;
    const arg = argv[token.index] as string;
    if (waiting !== undefined && !arg.startsWith('--')) {
      byFlag.set(waiting, arg);
      waiting = undefined;
      continue;
    }
    waiting = undefined;
    // `--` alone ends options for parseArgs; here it is a flag nobody declares, as before.
    if (token.kind === 'option-terminator') throw new ConfigError('unknown option --');
    if (token.kind === 'positional' || !arg.startsWith('--')) throw new ConfigError(`unexpected argument "${arg}"`);
    const flag = token.rawName;
    if (!known.has(flag)) throw new ConfigError(`unknown option ${arg.split('=')[0]}`);
    if (token.inlineValue) byFlag.set(flag, token.value as string);
    else {
      byFlag.set(flag, 'true');
      waiting = flag;
    }
  }
  return byFlag;
}

/** Builds the configuration; a bad value throws a `ConfigError` whose message names the setting. */
export function loadConfig(env: Record<string, string | undefined>, argv: readonly string[] = []): Config {
  const flags = parseArgv(argv);
  const partial: Partial<Config> = {};
  for (const s of SETTINGS) {
    const value = flags.get(s.flag) ?? env[s.env];
    if (value === undefined) {
      (partial as Record<string, unknown>)[s.key] = s.fallback(partial);
      continue;
    }
    const parsed = CONFIG_SCHEMA.shape[s.key].safeParse(value);
    if (!parsed.success) {
      const source = flags.has(s.flag) ? s.flag : s.env;
      throw new ConfigError(`${source}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
    }
    (partial as Record<string, unknown>)[s.key] = parsed.data;
  }
  const config = partial as Config;
  if (config.testMode && !config.testToken)
    throw new ConfigError('HEARTH_TEST_TOKEN: must be set when HEARTH_TEST_MODE is on');
  checkCaptcha(config);
  checkS3(config);
  if (config.redisUrl && config.redisClusterNodes.length > 0)
    throw new ConfigError('REDIS_CLUSTER_NODES: set either REDIS_URL (one server) or REDIS_CLUSTER_NODES, not both');
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
