import type { CredentialsRevoked } from '../domains/auth/sessions.ts';
import type { ChatReadModelPort } from '../domains/chat/read-model.ts';
import type { Dispatch } from '../domains/events/dispatch.ts';
import type { Logger } from '../platform/log.ts';
import { CLOSE, dispatchPrefix, FRAMES } from './protocol.ts';
import type { GatewaySession, SessionRegistry } from './sessions.ts';

interface Delivery {
  event: string;
  payload: Record<string, unknown>;
  recipients: GatewaySession[] | Promise<GatewaySession[]>;
}

/**
 * Turns bus dispatches into frames for exactly the sessions allowed to see them. Candidates come from the
 * in-memory indexes (guild → sessions, user → sessions); channel events are then filtered by
 * `canViewChannel`, asked once per user per dispatch. Deliveries leave in bus order even when a permission
 * check of an earlier one is still running, and each dispatch is serialised once, whoever receives it.
 */
export class Fanout {
  private readonly queue: Delivery[] = [];
  private draining = false;

  constructor(
    private readonly registry: SessionRegistry,
    private readonly chat: ChatReadModelPort,
    private readonly log: Logger,
  ) {}

  onDispatch(dispatch: Dispatch): void {
    const candidates = this.candidates(dispatch);
    // Index changes apply at receipt, so the next dispatch already sees the new membership.
    this.updateIndexes(dispatch, candidates);
    const { audience } = dispatch;
    const recipients =
      audience.kind === 'channel' && candidates.length > 0
        ? this.viewers(candidates, audience.guildId, audience.channelId)
        : candidates;
    if (this.queue.length === 0 && !this.draining && Array.isArray(recipients)) {
      this.send(dispatch.event, dispatch.payload, recipients);
      return;
    }
    this.queue.push({ event: dispatch.event, payload: dispatch.payload, recipients });
    void this.drain();
  }

  onRevoked(message: CredentialsRevoked): void {
    const sessions = this.registry.ofUser(message.userId);
    if (!sessions) return;
    for (const session of [...sessions]) {
      const { credential } = session;
      const matches =
        message.kind === 'user' ||
        (message.kind === 'sessions' &&
          credential.kind === 'session' &&
          message.sessionIdHashes.includes(credential.sessionIdHash)) ||
        (message.kind === 'bot' && credential.kind === 'bot' && credential.applicationId === message.applicationId);
      if (!matches) continue;
      this.registry.remove(session);
      session.socket?.closeWith(CLOSE.INVALID_TOKEN.code, CLOSE.INVALID_TOKEN.reason, FRAMES.invalidSession);
    }
  }

  private candidates(dispatch: Dispatch): GatewaySession[] {
    const { audience } = dispatch;
    if (audience.kind === 'users') {
      const out: GatewaySession[] = [];
      for (const userId of new Set(audience.userIds)) for (const s of this.registry.ofUser(userId) ?? []) out.push(s);
      return out;
    }
    return [...(this.registry.ofGuild(audience.guildId) ?? [])];
  }

  /** Keeps guild → sessions current from the membership events themselves (api.md §6). */
  private updateIndexes(dispatch: Dispatch, candidates: GatewaySession[]): void {
    const { event, payload } = dispatch;
    switch (event) {
      case 'GUILD_CREATE': {
        const guildId = stringField(payload, 'id');
        if (guildId && !payload.unavailable) for (const s of candidates) this.registry.joinGuild(s, guildId);
        return;
      }
      case 'GUILD_DELETE': {
        const guildId = stringField(payload, 'id');
        if (guildId) for (const s of candidates) this.registry.leaveGuild(s, guildId);
        return;
      }
      case 'GUILD_MEMBER_ADD': {
        const guildId = stringField(payload, 'guild_id');
        const userId = nestedUserId(payload);
        if (guildId && userId) for (const s of this.registry.ofUser(userId) ?? []) this.registry.joinGuild(s, guildId);
        return;
      }
      case 'GUILD_MEMBER_REMOVE': {
        const guildId = stringField(payload, 'guild_id');
        const userId = nestedUserId(payload);
        if (guildId && userId)
          for (const s of [...(this.registry.ofUser(userId) ?? [])]) this.registry.leaveGuild(s, guildId);
        return;
      }
    }
  }

  private async viewers(candidates: GatewaySession[], guildId: string, channelId: string): Promise<GatewaySession[]> {
    const decisions = new Map<string, Promise<boolean>>();
    for (const session of candidates)
      if (!decisions.has(session.userId))
        decisions.set(session.userId, this.chat.canViewChannel(session.userId, guildId, channelId));
    const allowed = new Set<string>();
    await Promise.all(
      [...decisions].map(async ([userId, decision]) => {
        if (await decision) allowed.add(userId);
      }),
    );
    return candidates.filter((s) => allowed.has(s.userId));
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const next = this.queue[0] as Delivery;
        let recipients: GatewaySession[] = [];
        try {
          recipients = await next.recipients;
        } catch (error) {
          // A failed permission check delivers to nobody rather than to everybody.
          this.log.error('gateway fan-out failed', { event: next.event, error: (error as Error).message });
        }
        this.queue.shift();
        this.send(next.event, next.payload, recipients);
      }
    } finally {
      this.draining = false;
    }
  }

  private send(event: string, payload: Record<string, unknown>, recipients: GatewaySession[]): void {
    if (recipients.length === 0) return;
    const prefix = dispatchPrefix(event, payload);
    for (const session of recipients) if (this.registry.get(session.id) === session) session.deliver(prefix);
  }
}

function stringField(payload: Record<string, unknown>, key: string): string | undefined {
  const value = payload[key];
  return typeof value === 'string' ? value : undefined;
}

function nestedUserId(payload: Record<string, unknown>): string | undefined {
  const user = payload.user;
  if (typeof user !== 'object' || user === null) return undefined;
  const id = (user as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}
