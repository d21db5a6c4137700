import type { CaptchaProvider } from '../../config/config.ts';
import { ApiError } from '../../http/errors.ts';
import type { Logger } from '../../platform/log.ts';
import { OutboundFailure, outboundClient } from '../../platform/net/outbound.ts';

/** Longest token sent to the provider; real hCaptcha and Turnstile tokens are a few KiB at most. */
const MAX_TOKEN_LENGTH = 8192;

export interface CaptchaVerifierOptions {
  provider: CaptchaProvider;
  secret: string | undefined;
  verifyUrl: string | undefined;
  timeoutMs: number;
  log: Logger;
}

export interface CaptchaAnswer {
  /** `X-Captcha-Token`. */
  token: string | undefined;
  /** `X-Captcha-Type`; when sent it must name the configured provider. */
  type: string | undefined;
  /** The client address, passed to the provider as `remoteip`. */
  remoteIp: string;
}

/**
 * Checks a CAPTCHA answer with the provider's siteverify API (hCaptcha and Turnstile speak the same
 * form-encoded protocol). Anything but an explicit `success: true` refuses the request, so an unreachable
 * or slow provider closes the door rather than opening it.
 */
export class CaptchaVerifier {
  constructor(private readonly options: CaptchaVerifierOptions) {}

  get enabled(): boolean {
    return this.options.provider !== 'none';
  }

  /** Throws 400 `CAPTCHA_REQUIRED` or `INVALID_CAPTCHA`; returns when the provider accepted the token. */
  async verify(answer: CaptchaAnswer): Promise<void> {
    const { provider } = this.options;
    if (!this.enabled) return;
    if (!answer.token) throw new ApiError('CAPTCHA_REQUIRED');
    if (answer.type !== undefined && answer.type.trim().toLowerCase() !== provider)
      throw new ApiError('INVALID_CAPTCHA');
    if (answer.token.length > MAX_TOKEN_LENGTH) throw new ApiError('INVALID_CAPTCHA');
    if (!(await this.askProvider(answer.token, answer.remoteIp))) throw new ApiError('INVALID_CAPTCHA');
  }

  private async askProvider(token: string, remoteIp: string): Promise<boolean> {
    const { provider, secret, verifyUrl, timeoutMs, log } = this.options;
    if (!secret || !verifyUrl) return false;
    const form = new URLSearchParams({ secret, response: token, remoteip: remoteIp });
    try {
      // The operator's URL (any address): the one outbound client, bounded in time and size, no redirect.
      const response = await outboundClient(true).fetch(
        verifyUrl,
        { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() },
        { timeoutMs, maxBytes: 64 * 1024 },
      );
      if (!response.ok) {
        log.warn('captcha verification failed', { provider, status: response.status });
        return false;
      }
      const result = (await response.json()) as { success?: unknown; 'error-codes'?: unknown };
      return result?.success === true;
    } catch (error) {
      // The provider is down, slow or answered garbage: the token cannot be trusted. No URL in the log
      // (an operator may put credentials in it).
      log.warn('captcha verification failed', {
        provider,
        error: error instanceof OutboundFailure ? error.reason : (error as Error).name,
      });
      return false;
    }
  }
}
