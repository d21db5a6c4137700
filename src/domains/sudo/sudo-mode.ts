import { jwtVerify, SignJWT } from 'jose';
import { ApiError, fieldError } from '../../http/errors.ts';
import type { Principal } from '../../identity/principal.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import { verifyPassword } from '../../platform/crypto/passwords.ts';
import { hasMfa, type MfaFactors, type MfaStatus } from '../mfa/mfa-factors.ts';

export const SUDO_HEADER = 'x-service-sudo-mode-jwt';
export const SUDO_PROOF_LIFETIME_S = 300;
const MAX_PASSWORD_LENGTH = 256;

/**
 * The proof fields any sudo-gated body may carry (docs/mfa-and-sudo.md#sudo-mode). Each is read on its own: a malformed neighbour
 * (say a too-short `password` beside a valid `mfa_code`) must not hide the others.
 */
interface SudoFields {
  password?: string;
  mfaMethod?: string;
  mfaCode?: string;
  webauthnResponse?: unknown;
  webauthnChallenge?: string;
}

function readSudoFields(rawBody: unknown): SudoFields {
  if (typeof rawBody !== 'object' || rawBody === null || Array.isArray(rawBody)) return {};
  const body = rawBody as Record<string, unknown>;
  const text = (value: unknown, max: number) => (typeof value === 'string' && value.length <= max ? value : undefined);
  return {
    password: typeof body.password === 'string' ? body.password : undefined,
    mfaMethod: typeof body.mfa_method === 'string' ? body.mfa_method : undefined,
    mfaCode: text(body.mfa_code, 64),
    webauthnResponse: body.webauthn_response,
    webauthnChallenge: text(body.webauthn_challenge, 512),
  };
}

export interface SudoOutcome {
  /** The proof to send back in `X-Service-Sudo-Mode-JWT`, if any. */
  responseProof?: string;
}

export interface SudoRequest {
  /** The raw request body (the proof fields ride along with the route's own). */
  rawBody: unknown;
  headerProof: string | undefined;
  /** `y⁰`: checked, but no proof is minted and none is echoed (docs/mfa-and-sudo.md#sudo-mode). */
  noProof: boolean;
  /** False only for relaxed test-mode requests: TOTP replay guard and MFA failure allowance off. */
  strict: boolean;
  /** Called for every failed re-verification (it counts toward IP bans). */
  onFailure: () => Promise<void>;
}

export interface SudoDeps {
  secret: string;
  mfa: MfaFactors;
  now: () => number;
}

/**
 * Sudo mode (docs/mfa-and-sudo.md#sudo-mode, docs/mfa-and-sudo.md#sudo-mode): decides whether the caller has recently re-verified a credential.
 * The steps run in the documented order.
 */
export class SudoMode {
  private readonly key: Uint8Array;

  constructor(private readonly deps: SudoDeps) {
    this.key = new TextEncoder().encode(deps.secret);
  }

  async require(principal: Principal, request: SudoRequest): Promise<SudoOutcome> {
    // 1. A bot account is satisfied at once.
    if (principal.kind === 'bot' || principal.user.isBot) return {};
    const user = principal.user;
    const status = await this.deps.mfa.status(user.id);
    const mfa = hasMfa(status);
    const fields = readSudoFields(request.rawBody);
    const answer = (proof: string): SudoOutcome => (request.noProof ? {} : { responseProof: proof });

    // 2. An MFA account with a valid proof; the proof is echoed as is (its lifetime is not extended).
    if (mfa && request.headerProof && (await this.isValidProof(request.headerProof, user.id))) {
      return answer(request.headerProof);
    }
    // 3. An MFA account re-verifying a factor gets a fresh proof.
    if (mfa && fields.mfaMethod !== undefined) {
      if (!(await this.verifyFactor(user, status, fields, request.strict))) {
        await request.onFailure();
        throw fieldError('mfa_code', 'INVALID_MFA_CODE', 'Invalid two-factor code');
      }
      return request.noProof ? {} : { responseProof: await this.mint(user.id) };
    }
    // 4. Nothing to re-verify with: satisfied, no proof.
    if (!mfa && !user.passwordHash) return {};
    // 5. A password account without MFA re-verifies its password every time and never gets a proof.
    if (!mfa && user.passwordHash && fields.password !== undefined) {
      const plausible = fields.password.length <= MAX_PASSWORD_LENGTH;
      if (!plausible || !(await verifyPassword(user.passwordHash, fields.password))) {
        await request.onFailure();
        throw fieldError('password', 'INVALID_PASSWORD', 'Password does not match');
      }
      return {};
    }
    // 6. Everything else, including an MFA account sending only its password.
    throw sudoRequired(user, status);
  }

  private async verifyFactor(
    user: UserRecord,
    status: MfaStatus,
    fields: SudoFields,
    strict: boolean,
  ): Promise<boolean> {
    const now = this.deps.now();
    if (fields.mfaMethod === 'totp') {
      return (
        status.totp && fields.mfaCode !== undefined && this.deps.mfa.verifyCode(user, fields.mfaCode, now, { strict })
      );
    }
    if (fields.mfaMethod === 'webauthn') {
      return (
        status.webauthn &&
        fields.webauthnChallenge !== undefined &&
        this.deps.mfa.verifyWebAuthn(user, fields.webauthnResponse, fields.webauthnChallenge, now, {
          strict,
          purpose: 'sudo',
        })
      );
    }
    return false;
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

  /** Signature (HS256 only), `type`, `sub` = caller and `exp` against the server clock; anything else is absent. */
  async isValidProof(token: string, userId: string): Promise<boolean> {
    if (token.length > 4096) return false;
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        currentDate: new Date(this.deps.now()),
        subject: userId,
        requiredClaims: ['exp', 'iat'],
      });
      return payload.type === 'sudo';
    } catch {
      return false;
    }
  }
}

/** 403 `SUDO_MODE_REQUIRED` with the sudo-mode-methods object (docs/mfa-and-sudo.md#sudo-mode). */
export function sudoRequired(user: UserRecord, status: MfaStatus): ApiError {
  const mfa = hasMfa(status);
  return new ApiError('SUDO_MODE_REQUIRED', {
    extra: {
      has_mfa: mfa,
      methods: { totp: status.totp, webauthn: status.webauthn, password: !mfa && Boolean(user.passwordHash) },
    },
  });
}
