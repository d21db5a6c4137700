import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { enforceAllowance } from '../../http/allowance.ts';
import { ApiError, allowanceExceeded, fieldError } from '../../http/errors.ts';
import { type AnyRoute, type RequestContext, route } from '../../http/route.ts';
import { CLEARED_BY_EMAIL_VERIFICATION } from '../../identity/flags.ts';
import { digest, randomBase62 } from '../../platform/crypto/tokens.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { emailField } from '../auth/account-rules.ts';
import type { OneTimeToken } from '../auth/one-time-tokens.ts';
import type { EmailTokenApplier } from '../users/email-token.ts';
import { codeDigest, codeMatches, newCode, secretMatches } from './email-codes.ts';

export const EMAIL_CHANGE_TICKET_TTL_MS = 30 * 60_000;
export const EMAIL_CHANGE_CODE_TTL_MS = 10 * 60_000;
export const EMAIL_CHANGE_RESEND_COOLDOWN_MS = 30_000;
export const EMAIL_TOKEN_TTL_MS = 30 * 60_000;
export const EMAIL_REVERT_TTL_MS = 24 * 3600_000;
const MAX_CODE_FAILURES = 5;

/** State of one email change in flight; codes and the proof are kept only as digests. */
interface ChangeTicket {
  require_original: boolean;
  original_email: string | null;
  original_code_hash?: string;
  original_code_expires_at?: number;
  original_sent_at?: number;
  original_proof_hash?: string;
  new_email?: string;
  new_code_hash?: string;
  new_code_expires_at?: number;
  new_sent_at?: number;
  failures: number;
}

export interface RevertData {
  old_email: string;
  new_email: string;
}

const ticketField = z.string().max(128);
const codeField = z.string().max(32);
const proofField = z.string().max(128);

const invalidTicket = () =>
  fieldError('ticket', 'INVALID_OR_EXPIRED_EMAIL_CHANGE_TICKET', 'Invalid or expired email change ticket');
const invalidCode = () => fieldError('code', 'INVALID_CODE', 'Invalid code');
const invalidProof = () => fieldError('original_proof', 'INVALID_PROOF_TOKEN', 'Invalid proof token');

/** What `emailChangeRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type EmailChangeRoutesDeps = Pick<AppServices, 'clock' | 'emails' | 'rateLimiter' | 'tokens' | 'users'>;

/**
 * Email change (docs/accounts.md): start → (verify-original, when the current address is verified) →
 * request-new → verify-new → `PATCH /users/@me {email_token}`. Every step is sudo-gated and admits
 * suspicious accounts; the old address gets a revert link once the change is applied.
 */
export function emailChangeRoutes(services: EmailChangeRoutesDeps): AnyRoute[] {
  const { tokens, emails, rateLimiter, clock } = services;

  async function loadTicket(ctx: RequestContext, ticket: string): Promise<OneTimeToken<ChangeTicket>> {
    const live = await tokens.peek<ChangeTicket>('email_change_ticket', ticket);
    if (!live || live.userId !== ctx.user.id) throw invalidTicket();
    return live;
  }

  async function sendAllowance(ctx: RequestContext): Promise<void> {
    await enforceAllowance(rateLimiter, ctx, `email-change-send:${ctx.user.id}`, 3, 15 * 60_000);
  }

  /**
   * Counts a wrong code in one conditional UPDATE; the fifth kills the ticket, so parallel guesses cannot
   * get past five. A guess that finds the ticket already dead gets the dead-ticket answer.
   */
  async function recordFailure(ticket: string): Promise<never> {
    const charged = await tokens.chargeFailure('email_change_ticket', ticket, MAX_CODE_FAILURES, {
      expireAtMax: true,
    });
    if (charged === undefined) throw invalidTicket();
    throw invalidCode();
  }

  function checkCooldown(sentAt: number | undefined): void {
    const wait = (sentAt ?? 0) + EMAIL_CHANGE_RESEND_COOLDOWN_MS - clock.now();
    if (wait > 0) throw allowanceExceeded(1, wait, wait, clock.now());
  }

  async function mailOriginalCode(ticket: string, data: ChangeTicket, to: string): Promise<ChangeTicket> {
    const code = newCode();
    const now = clock.now();
    const next: ChangeTicket = {
      ...data,
      original_code_hash: codeDigest(digest(ticket), code),
      original_code_expires_at: now + EMAIL_CHANGE_CODE_TTL_MS,
      original_sent_at: now,
    };
    await emails.sendCode('email_change_original', to, code);
    return next;
  }

  async function mailNewCode(ticket: string, data: ChangeTicket, to: string): Promise<ChangeTicket> {
    const code = newCode();
    const now = clock.now();
    const next: ChangeTicket = {
      ...data,
      new_email: to,
      new_code_hash: codeDigest(digest(ticket), code),
      new_code_expires_at: now + EMAIL_CHANGE_CODE_TTL_MS,
      new_sent_at: now,
    };
    await emails.sendCode('email_change_new', to, code);
    return next;
  }

  const common = {
    policy: 'user-only' as const,
    admitsSuspicious: true,
    rateLimit: { bucket: 'users:email_change', limit: 20, windowSeconds: 10 },
  };

  return [
    route({
      ...common,
      method: 'POST',
      path: '/users/@me/email-change/start',
      sudo: 'y',
      async handler(ctx) {
        const user = ctx.user;
        const requireOriginal = Boolean(user.email && user.emailVerified);
        if (requireOriginal) await sendAllowance(ctx);
        // One change in flight per account.
        await tokens.revokeAll('email_change_ticket', user.id);
        const ticket = randomBase62(64);
        let data: ChangeTicket = { require_original: requireOriginal, original_email: user.email, failures: 0 };
        let proof: string | undefined;
        if (requireOriginal && user.email) {
          data = await mailOriginalCode(ticket, data, user.email);
        } else {
          proof = randomBase62(64);
          data.original_proof_hash = digest(proof);
        }
        await tokens.issue('email_change_ticket', user.id, EMAIL_CHANGE_TICKET_TTL_MS, { ...data }, { token: ticket });
        return {
          ticket,
          require_original: requireOriginal,
          ...(proof ? { original_proof: proof } : {}),
          ...(data.original_sent_at
            ? { resend_available_at: new Date(data.original_sent_at + EMAIL_CHANGE_RESEND_COOLDOWN_MS).toISOString() }
            : {}),
        };
      },
    }),

    route({
      ...common,
      method: 'POST',
      path: '/users/@me/email-change/verify-original',
      sudo: 'y',
      body: z.object({ ticket: ticketField, code: codeField }),
      async handler(ctx) {
        const { ticket, code } = ctx.body;
        const live = await loadTicket(ctx, ticket);
        const data = live.data;
        if (!data.require_original || !data.original_code_hash) throw invalidCode();
        const fresh = (data.original_code_expires_at ?? 0) > clock.now();
        if (!fresh || !codeMatches(digest(ticket), code, data.original_code_hash)) await recordFailure(ticket);
        const proof = randomBase62(64);
        const { original_code_hash: _used, ...rest } = data;
        await tokens.update('email_change_ticket', ticket, {
          ...rest,
          original_proof_hash: digest(proof),
          failures: 0,
        });
        return { original_proof: proof };
      },
    }),

    route({
      ...common,
      method: 'POST',
      path: '/users/@me/email-change/request-new',
      sudo: 'y',
      body: z.object({ ticket: ticketField, new_email: emailField, original_proof: proofField }),
      async handler(ctx) {
        const { ticket, new_email, original_proof } = ctx.body;
        const live = await loadTicket(ctx, ticket);
        if (!secretMatches(original_proof, live.data.original_proof_hash)) throw invalidProof();
        if (await services.users.findByEmail(new_email))
          throw fieldError('new_email', 'EMAIL_ALREADY_IN_USE', 'Email is already registered');
        await sendAllowance(ctx);
        const next = await mailNewCode(ticket, { ...live.data, failures: 0 }, new_email);
        await tokens.update('email_change_ticket', ticket, { ...next });
        return {
          ticket,
          new_email,
          new_code_expires_at: new Date(next.new_code_expires_at as number).toISOString(),
        };
      },
    }),

    route({
      ...common,
      method: 'POST',
      path: '/users/@me/email-change/verify-new',
      sudo: 'y',
      body: z.object({ ticket: ticketField, code: codeField, original_proof: proofField }),
      async handler(ctx) {
        const { ticket, code, original_proof } = ctx.body;
        const live = await loadTicket(ctx, ticket);
        const data = live.data;
        if (!secretMatches(original_proof, data.original_proof_hash)) throw invalidProof();
        if (!data.new_email || !data.new_code_hash) throw invalidCode();
        const fresh = (data.new_code_expires_at ?? 0) > clock.now();
        if (!fresh || !codeMatches(digest(ticket), code, data.new_code_hash)) await recordFailure(ticket);
        if (!(await tokens.consume('email_change_ticket', ticket))) throw invalidTicket();
        const emailToken = await tokens.issue('email_change_token', ctx.user.id, EMAIL_TOKEN_TTL_MS, {
          new_email: data.new_email,
        });
        return { email_token: emailToken };
      },
    }),

    route({
      ...common,
      method: 'POST',
      path: '/users/@me/email-change/resend-original',
      body: z.object({ ticket: ticketField }),
      async handler(ctx) {
        const { ticket } = ctx.body;
        const live = await loadTicket(ctx, ticket);
        const data = live.data;
        if (!data.require_original || data.original_proof_hash || !data.original_email)
          throw new ApiError('BAD_REQUEST', { message: 'No code is pending for the current address' });
        checkCooldown(data.original_sent_at);
        await sendAllowance(ctx);
        const next = await mailOriginalCode(ticket, data, data.original_email);
        await tokens.update('email_change_ticket', ticket, { ...next });
        return undefined;
      },
    }),

    route({
      ...common,
      method: 'POST',
      path: '/users/@me/email-change/resend-new',
      body: z.object({ ticket: ticketField }),
      async handler(ctx) {
        const { ticket } = ctx.body;
        const live = await loadTicket(ctx, ticket);
        const data = live.data;
        if (!data.new_email || !data.new_code_hash)
          throw new ApiError('BAD_REQUEST', { message: 'No code is pending for the new address' });
        checkCooldown(data.new_sent_at);
        await sendAllowance(ctx);
        const next = await mailNewCode(ticket, data, data.new_email);
        await tokens.update('email_change_ticket', ticket, { ...next });
        return undefined;
      },
    }),
  ];
}

/**
 * Finishes an email change from `PATCH /users/@me {email_token}`: the new address becomes the account's
 * verified address and the old one gets a 24-hour revert link.
 */
export function emailTokenApplier(
  services: Pick<AppServices, 'credentials' | 'db' | 'emails' | 'tokens' | 'users'>,
): EmailTokenApplier {
  const { tokens, db, emails, credentials } = services;
  const invalid = () => fieldError('email_token', 'INVALID_OR_EXPIRED_EMAIL_TOKEN', 'Invalid or expired email token');
  return async (userId, emailToken) => {
    const live = await tokens.peek<{ new_email: string }>('email_change_token', emailToken);
    if (!live || live.userId !== userId) throw invalid();
    const user = await services.users.findById(userId, { fresh: true });
    if (!user) throw invalid();
    const oldEmail = user.email;
    const newEmail = live.data.new_email;
    try {
      await db.transaction(async (tx) => {
        if (!(await tokens.consume('email_change_token', emailToken, tx))) throw invalid();
        await tx.query(
          `UPDATE users SET email = $2, email_verified = true,
                  suspicious_activity_flags = suspicious_activity_flags & ~($3::integer) WHERE id = $1`,
          [userId, newEmail, CLEARED_BY_EMAIL_VERIFICATION],
        );
        // Links mailed to the old address must not act on the new one.
        await tokens.revokeAll(['email_verification', 'password_reset', 'email_change_ticket'], userId, tx);
      });
    } catch (error) {
      if (isUniqueViolation(error))
        throw fieldError('email_token', 'EMAIL_ALREADY_IN_USE', 'Email is already registered');
      throw error;
    }
    await credentials.invalidate({ userId });
    if (oldEmail && oldEmail.toLowerCase() !== newEmail.toLowerCase()) {
      const revert: RevertData = { old_email: oldEmail, new_email: newEmail };
      const token = await tokens.issue('email_revert', userId, EMAIL_REVERT_TTL_MS, { ...revert });
      await emails.sendLink('email_change_revert', oldEmail, token, { user_id: userId, new_email: newEmail });
    }
  };
}
