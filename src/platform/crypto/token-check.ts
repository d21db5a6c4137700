import { deriveKey } from './sealed-box.ts';
import { hmacSha256, randomBase62, randomBase64Url, SESSION_TOKEN_PREFIX } from './tokens.ts';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Session token: `flx_` + 30 random base62 + 6 check characters (still `flx_` + 36 alphanumerics). */
const SESSION_RANDOM = 30;
const SESSION_CHECK = 6;
/** Bot token secret: 35 random base64url + 8 check characters (still 43 characters). */
const BOT_RANDOM_BYTES = 26;
const BOT_RANDOM = 35;
const BOT_CHECK = 8;

/**
 * A keyed check part inside every new session and bot token (docs/accounts.md, "Token check"): the last
 * characters are an HMAC of the rest under a server key, so a forged or random token is refused from the
 * token alone, without a database read. Tokens issued before checks existed are recognised by their digests
 * (kept by the resolver), not by their form, which is unchanged.
 */
export class TokenCheck {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = deriveKey(secret, 'hearth token check v1');
  }

  newSessionToken(): string {
    const body = randomBase62(SESSION_RANDOM);
    return SESSION_TOKEN_PREFIX + body + this.base62Mac(`s:${body}`, SESSION_CHECK);
  }

  newBotToken(applicationId: string): string {
    const body = randomBase64Url(BOT_RANDOM_BYTES).slice(0, BOT_RANDOM);
    return `${applicationId}.${body}${this.base64Mac(`b:${applicationId}.${body}`, BOT_CHECK)}`;
  }

  /** `flx_` + 36: does the check part match? (Callers have already checked the form.) */
  sessionChecks(token: string): boolean {
    const body = token.slice(SESSION_TOKEN_PREFIX.length, SESSION_TOKEN_PREFIX.length + SESSION_RANDOM);
    const check = token.slice(SESSION_TOKEN_PREFIX.length + SESSION_RANDOM);
    return check.length === SESSION_CHECK && check === this.base62Mac(`s:${body}`, SESSION_CHECK);
  }

  botChecks(token: string, applicationId: string): boolean {
    const secret = token.slice(applicationId.length + 1);
    if (secret.length !== BOT_RANDOM + BOT_CHECK) return false;
    const body = secret.slice(0, BOT_RANDOM);
    return secret.slice(BOT_RANDOM) === this.base64Mac(`b:${applicationId}.${body}`, BOT_CHECK);
  }

  private base62Mac(data: string, length: number): string {
    const mac = hmacSha256(this.key, data);
    let out = '';
    // 256 is not a multiple of 62; the slight bias costs a fraction of a bit of a 35-bit check.
    for (let i = 0; i < length; i++) out += BASE62[(mac[i] as number) % 62];
    return out;
  }

  private base64Mac(data: string, length: number): string {
    return hmacSha256(this.key, data).toString('base64url').slice(0, length);
  }
}
