import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import { hasFlag, USER_FLAGS } from '../../identity/flags.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import { openUnder, sealUnder } from '../../platform/crypto/sealed-box.ts';
import { digest, randomBase62 } from '../../platform/crypto/tokens.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { describeDevice } from './client-info.ts';
import type { ClientInfo } from './session-store.ts';

export const IP_AUTHORIZATION_TTL_MS = 15 * 60_000;
export const IP_AUTHORIZATION_RESEND_AFTER_S = 30;
/** How long a completed ticket keeps handing out its session to the polling device. */
export const IP_AUTHORIZATION_POLL_WINDOW_MS = 60_000;

const TICKET_KEY_LABEL = 'hearth ip-authorization ticket';
const SESSION_KEY_LABEL = 'hearth ip-authorization session';

/** What the ticket row carries. The held session is sealed under a key only the ticket holder can derive. */
export interface TicketData {
  ip: string;
  ip_key: string;
  email: string;
  resend_used: boolean;
  completed?: boolean;
  completed_at?: number;
  sealed_session?: string;
  /** The device that asked (os and platform words only), for the session made when the link is followed. */
  client?: ClientInfo;
}

/** What the emailed token row carries: the ticket sealed under a key derived from the token itself. */
export interface TokenData {
  ticket_hash: string;
  sealed_ticket: string;
  ip: string;
  ip_key: string;
}

export interface IpAuthorizationSeed {
  ticket: string;
  token: string;
  userId: string;
  email: string;
  ip: string;
  ipKey: string;
  resendUsed?: boolean;
  createdAt?: number;
  ttlMs?: number;
  client?: ClientInfo;
}

/** What `IpAuthorization` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type IpAuthorizationDeps = Pick<AppServices, 'clock' | 'config' | 'db' | 'emails' | 'sessions' | 'tokens'>;

/**
 * IP authorisation (docs/accounts.md): a correct password from an address the account has not used before is
 * held until the emailed link is followed. Active only when enabled and email can be delivered (or test mode).
 *
 * Neither the ticket nor the emailed token is stored, only their digests. Following the link opens the
 * ticket (sealed under the token), issues the held session and seals its token under the ticket, so the
 * database alone never yields a usable session token.
 */
export class IpAuthorization {
  constructor(private readonly services: IpAuthorizationDeps) {}

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

  async authorize(userId: string, ipKey: string, db: Queryable = this.services.db): Promise<void> {
    await db.query('INSERT INTO authorized_ips (user_id, ip_key) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
      userId,
      ipKey,
    ]);
  }

  /** The set becomes exactly the requester's address (email revert). */
  async replaceAll(userId: string, ipKey: string, db: Queryable = this.services.db): Promise<void> {
    await this.forgetAll(userId, db);
    await this.authorize(userId, ipKey, db);
  }

  async forgetAll(userId: string, db: Queryable = this.services.db): Promise<void> {
    await db.query('DELETE FROM authorized_ips WHERE user_id = $1', [userId]);
  }

  /** Throws 403 IP_AUTHORIZATION_REQUIRED (and emails the link) when the address is new. */
  async requireKnownAddress(user: UserRecord, ip: string, ipKey: string, client: ClientInfo = {}): Promise<void> {
    if (await this.isKnown(user.id, ipKey)) return;
    if (!this.active || !user.email || hasFlag(user.flags, USER_FLAGS.APP_STORE_REVIEWER)) {
      await this.authorize(user.id, ipKey);
      return;
    }
    const ticket = randomBase62(64);
    const token = randomBase62(64);
    await this.seed({ ticket, token, userId: user.id, email: user.email, ip, ipKey, client });
    await this.services.emails.sendLink(
      'ip_authorization',
      user.email,
      token,
      { user_id: user.id, ip },
      newLocationDetails(ip, client, this.services.clock.now()),
    );
    throw new ApiError('IP_AUTHORIZATION_REQUIRED', {
      extra: {
        ip_authorization_required: true,
        ticket,
        email: user.email,
        resend_available_in: IP_AUTHORIZATION_RESEND_AFTER_S,
      },
    });
  }

  /** Stores a ticket and its emailed token (login, and the test harness). */
  async seed(seed: IpAuthorizationSeed): Promise<void> {
    const { tokens } = this.services;
    const ttl = seed.ttlMs ?? IP_AUTHORIZATION_TTL_MS;
    const createdAt = seed.createdAt ?? this.services.clock.now();
    const ticketData: TicketData = {
      ip: seed.ip,
      ip_key: seed.ipKey,
      email: seed.email,
      resend_used: seed.resendUsed ?? false,
      ...(seed.client && Object.keys(seed.client).length > 0 ? { client: seed.client } : {}),
    };
    await tokens.issue(
      'ip_authorization_ticket',
      seed.userId,
      ttl,
      { ...ticketData },
      { token: seed.ticket, createdAt },
    );
    await this.issueToken(seed.userId, seed.ticket, seed.ip, seed.ipKey, ttl, seed.token, createdAt);
  }

  private async issueToken(
    userId: string,
    ticket: string,
    ip: string,
    ipKey: string,
    ttlMs: number,
    token: string,
    createdAt?: number,
  ): Promise<void> {
    const data: TokenData = {
      ticket_hash: digest(ticket),
      sealed_ticket: sealUnder(token, TICKET_KEY_LABEL, ticket),
      ip,
      ip_key: ipKey,
    };
    await this.services.tokens.issue(
      'ip_authorization_token',
      userId,
      ttlMs,
      { ...data },
      {
        token,
        ...(createdAt !== undefined ? { createdAt } : {}),
      },
    );
  }

  /** Reads a live, not yet completed ticket. */
  async findTicket(ticket: string) {
    return this.services.tokens.peek<TicketData>('ip_authorization_ticket', ticket);
  }

  async findToken(token: string) {
    return this.services.tokens.peek<TokenData>('ip_authorization_token', token);
  }

  /**
   * Follows the emailed link: authorises the address and publishes a new session to the ticket.
   * Returns false when the token was already used (a concurrent follow won the race).
   */
  async complete(token: string, userId: string): Promise<boolean> {
    const { tokens, sessions, clock } = this.services;
    const used = await tokens.consume<TokenData>('ip_authorization_token', token);
    if (!used || used.userId !== userId) return false;
    const ticket = openUnder(token, TICKET_KEY_LABEL, used.data.sealed_ticket);
    const held = ticket ? await this.findTicket(ticket) : undefined;
    await this.authorize(userId, used.data.ip_key);
    if (!ticket || !held || held.data.completed) return true;
    const session = await sessions.issue(userId, used.data.ip, held.data.client ?? {});
    const now = clock.now();
    const completed: TicketData = {
      ...held.data,
      completed: true,
      completed_at: now,
      sealed_session: sealUnder(ticket, SESSION_KEY_LABEL, session.token),
    };
    // The ticket now only serves the poll window.
    const expiresBy = now + IP_AUTHORIZATION_POLL_WINDOW_MS;
    await tokens.update('ip_authorization_ticket', ticket, { ...completed }, { expiresBy });
    return true;
  }

  /** The held session's token, for the device holding the ticket. */
  openSession(ticket: string, data: TicketData): string | undefined {
    return data.sealed_session ? openUnder(ticket, SESSION_KEY_LABEL, data.sealed_session) : undefined;
  }

  /** A fresh link for the same ticket; earlier links stop working. */
  async resend(ticket: string, userId: string, data: TicketData, expiresAt: Date): Promise<void> {
    const { tokens, clock, emails } = this.services;
    await tokens.revokeByData('ip_authorization_token', userId, 'ticket_hash', digest(ticket));
    await tokens.update('ip_authorization_ticket', ticket, { ...data, resend_used: true });
    const token = randomBase62(64);
    const ttl = Math.max(1, expiresAt.getTime() - clock.now());
    await this.issueToken(userId, ticket, data.ip, data.ip_key, ttl, token);
    await emails.sendLink(
      'ip_authorization',
      data.email,
      token,
      { user_id: userId, ip: data.ip, resend: true },
      newLocationDetails(data.ip, data.client ?? {}, clock.now()),
    );
  }

  /** Test harness: ends a ticket and/or token now. */
  async expire(ticket: string | undefined, token: string | undefined): Promise<void> {
    const { tokens } = this.services;
    if (ticket) {
      await tokens.expire('ip_authorization_ticket', ticket);
      await tokens.expireByData('ip_authorization_token', 'ticket_hash', digest(ticket));
    }
    if (token) await tokens.expire('ip_authorization_token', token);
  }
}

/** What the new-location email says about the attempt: address, device and time (no place: no location database). */
function newLocationDetails(ip: string, client: ClientInfo, now: number): string[] {
  return [
    `Address: ${ip}`,
    `Device: ${describeDevice(client)}`,
    `Time: ${new Date(now).toISOString().replace('T', ' ').slice(0, 19)} UTC`,
  ];
}
