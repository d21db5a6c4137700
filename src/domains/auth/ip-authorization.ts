import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import { randomBase62 } from '../../platform/crypto/tokens.ts';
import { hasFlag, USER_FLAGS } from '../users/flags.ts';
import type { UserRecord } from '../users/user-record.ts';

export const IP_AUTHORIZATION_TTL_MS = 15 * 60_000;
export const IP_AUTHORIZATION_RESEND_AFTER_S = 30;

/**
 * IP authorisation (api.md §3.1): a correct password from an address the account has not used before is
 * held until the emailed link is followed. Active only when enabled and email can be delivered (or test mode).
 */
export class IpAuthorization {
  constructor(private readonly services: AppServices) {}

  get active(): boolean {
    const { config, emails } = this.services;
    return config.ipAuthorization && (emails.enabled || config.testMode);
  }

  async isKnown(userId: string, ipKey: string): Promise<boolean> {
    const rows = await this.services.db.query('SELECT 1 FROM authorized_ips WHERE user_id = $1 AND ip_key = $2', [
      userId,
      ipKey,
    ]);
    return rows.length > 0;
  }

  async authorize(userId: string, ipKey: string): Promise<void> {
    await this.services.db.query(
      'INSERT INTO authorized_ips (user_id, ip_key) VALUES ($1, $2) ON CONFLICT DO NOTHING',
      [userId, ipKey],
    );
  }

  /** Throws 403 IP_AUTHORIZATION_REQUIRED (and emails the link) when the address is new. */
  async requireKnownAddress(user: UserRecord, ip: string, ipKey: string): Promise<void> {
    if (await this.isKnown(user.id, ipKey)) return;
    if (!this.active || !user.email || hasFlag(user.flags, USER_FLAGS.APP_STORE_REVIEWER)) {
      await this.authorize(user.id, ipKey);
      return;
    }
    const { tokens, emails } = this.services;
    const ticket = randomBase62(64);
    const token = await tokens.issue('ip_authorization_token', user.id, IP_AUTHORIZATION_TTL_MS, {
      ticket,
      ip,
      ip_key: ipKey,
    });
    await tokens.issue(
      'ip_authorization_ticket',
      user.id,
      IP_AUTHORIZATION_TTL_MS,
      { ip, ip_key: ipKey, resend_used: false, email: user.email },
      { token: ticket },
    );
    await emails.sendLink('ip_authorization', user.email, token, { user_id: user.id, ticket });
    throw new ApiError('IP_AUTHORIZATION_REQUIRED', {
      extra: {
        ip_authorization_required: true,
        ticket,
        email: user.email,
        resend_available_in: IP_AUTHORIZATION_RESEND_AFTER_S,
      },
    });
  }
}

export function maskEmail(email: string): string {
  const [local = '', domain = ''] = email.split('@');
  return `${local.slice(0, 1)}${'*'.repeat(Math.max(1, local.length - 1))}@${domain}`;
}
