import { MFA_TICKET_MAX_FAILURES, MFA_TICKET_TTL_MS } from '../auth/login-mfa.ts';
import type { OneTimeTokens } from '../auth/one-time-tokens.ts';

/**
 * The MFA login ticket (docs/conventions.md#credentials): 5 minutes, single use, dead after 5 bad codes. Each attempt is charged
 * to the ticket before the code is checked (OneTimeTokens.chargeFailure, one conditional UPDATE), so parallel
 * guesses cannot exceed 5.
 */
export class MfaTickets {
  constructor(private readonly tokens: OneTimeTokens) {}

  /** A fresh ticket with no failures charged (login, password reset, and the test harness's chosen ticket). */
  issue(userId: string, options: { ttlMs?: number; token?: string; inviteCode?: string } = {}): Promise<string> {
    return this.tokens.issue(
      'mfa_ticket',
      userId,
      options.ttlMs ?? MFA_TICKET_TTL_MS,
      { failures: 0, ...(options.inviteCode ? { invite_code: options.inviteCode } : {}) },
      options.token !== undefined ? { token: options.token } : {},
    );
  }

  /** The account a live ticket belongs to, without using it up. */
  async peek(ticket: string): Promise<string | undefined> {
    if (!isTicketShaped(ticket)) return undefined;
    const token = await this.tokens.peek<{ failures?: number }>('mfa_ticket', ticket);
    if (!token?.userId || (token.data.failures ?? 0) >= MFA_TICKET_MAX_FAILURES) return undefined;
    return token.userId;
  }

  /** Charges one attempt; false when the ticket is unknown, expired, used or out of attempts. */
  async chargeAttempt(ticket: string): Promise<boolean> {
    if (!isTicketShaped(ticket)) return false;
    return (await this.tokens.chargeFailure('mfa_ticket', ticket, MFA_TICKET_MAX_FAILURES)) !== undefined;
  }

  /**
   * Uses the ticket up; of two concurrent successful steps only one gets the account back, with the login's
   * `invite_code` when it had one.
   */
  async consume(ticket: string): Promise<{ userId: string; inviteCode: string | null } | undefined> {
    const token = await this.tokens.consume<{ invite_code?: unknown }>('mfa_ticket', ticket);
    if (!token?.userId) return undefined;
    const code = token.data.invite_code;
    return { userId: token.userId, inviteCode: typeof code === 'string' ? code : null };
  }
}

function isTicketShaped(ticket: string): boolean {
  return ticket.length > 0 && ticket.length <= 256;
}
