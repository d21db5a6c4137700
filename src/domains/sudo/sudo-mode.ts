import { jwtVerify, SignJWT } from 'jose';
import { z } from 'zod';
import type { Principal } from '../../http/auth/principal.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { verifyPassword } from '../../platform/crypto/passwords.ts';
import { hasMfa, type MfaFactors } from '../mfa/mfa-factors.ts';

export const SUDO_HEADER = 'x-service-sudo-mode-jwt';
export const SUDO_PROOF_LIFETIME_S = 300;

/** The proof fields any sudo-gated body may carry (api.md §4). */
const sudoFields = z.object({
  password: z.string().min(8).max(256).optional(),
  mfa_method: z.enum(['totp', 'webauthn']).optional(),
  mfa_code: z.string().max(64).optional(),
  webauthn_response: z.unknown().optional(),
  webauthn_challenge: z.string().max(512).optional(),
});

export interface SudoOutcome {
  /** The proof to send back in `X-Service-Sudo-Mode-JWT`, if any. */
  responseProof?: string;
}

export interface SudoDeps {
  secret: string;
  mfa: MfaFactors;
  now: () => number;
}

/**
 * Sudo mode (contract §5.7, api.md §4): decides whether the caller has recently re-verified a credential.
 * Steps run in the documented order; `noProof` is the `y⁰` exception (no proof minted, no header echoed).
 */
export class SudoMode {
  private readonly key: Uint8Array;

  constructor(private readonly deps: SudoDeps) {
    this.key = new TextEncoder().encode(deps.secret);
  }

  /** `onFailure` is called for every failed re-verification (it counts toward IP bans). */
  async require(
    principal: Principal,
    rawBody: unknown,
    headerProof: string | undefined,
    noProof: boolean,
    onFailure: () => Promise<void>,
  ): Promise<SudoOutcome> {
    if (principal.kind === 'bot' || principal.user.isBot) return {};
    const user = principal.user;
    const status = await this.deps.mfa.status(user.id);
    const mfa = hasMfa(status);
    const parsed = sudoFields.safeParse(rawBody ?? {});
    const fields = parsed.success ? parsed.data : {};

    if (mfa && headerProof && (await this.isValidProof(headerProof, user.id))) {
      return noProof ? {} : { responseProof: headerProof };
    }
    if (mfa && fields.mfa_method) {
      const now = this.deps.now();
      const ok =
        fields.mfa_method === 'totp'
          ? status.totp &&
            typeof fields.mfa_code === 'string' &&
            (await this.deps.mfa.verifyCode(user, fields.mfa_code, now))
          : status.webauthn &&
            typeof fields.webauthn_challenge === 'string' &&
            (await this.deps.mfa.verifyWebAuthn(user, fields.webauthn_response, fields.webauthn_challenge, now));
      if (!ok) {
        await onFailure();
        throw fieldError('mfa_code', 'INVALID_MFA_CODE', 'Invalid two-factor code');
      }
      return noProof ? {} : { responseProof: await this.mint(user.id) };
    }
    if (!mfa && !user.passwordHash) return {};
    if (!mfa && fields.password !== undefined && user.passwordHash) {
      if (!(await verifyPassword(user.passwordHash, fields.password))) {
        await onFailure();
        throw fieldError('password', 'INVALID_PASSWORD', 'Password does not match');
      }
      return {};
    }
    throw new ApiError('SUDO_MODE_REQUIRED', {
      extra: {
        has_mfa: mfa,
        methods: { totp: status.totp, webauthn: status.webauthn, password: !mfa && Boolean(user.passwordHash) },
      },
    });
  }

  async mint(userId: string): Promise<string> {
    const iat = Math.floor(this.deps.now() / 1000);
    return new SignJWT({ type: 'sudo' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setIssuedAt(iat)
      .setExpirationTime(iat + SUDO_PROOF_LIFETIME_S)
      .sign(this.key);
  }

  async isValidProof(token: string, userId: string): Promise<boolean> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        currentDate: new Date(this.deps.now()),
        subject: userId,
      });
      return payload.type === 'sudo' && typeof payload.exp === 'number';
    } catch {
      return false;
    }
  }
}
