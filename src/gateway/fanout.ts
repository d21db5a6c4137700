import type { CredentialsRevoked } from '../domains/auth/sessions.ts';
import type { GuildPayloadView } from '../domains/chat/guild-payload.ts';
import type { ChatReadModelPort } from '../domains/chat/read-model.ts';
import type { Dispatch, GatewayEvent } from '../domains/events/dispatch.ts';
import type { Logger } from '../platform/log.ts';
import type { BusMark } from '../platform/state/event-bus.ts';
import { CLOSE, type EventFrame, FRAMES, framePrefix } from './protocol.ts';
import type { FrameTag, GatewaySession, SessionRegistry } from './sessions.ts';

/** One frame for some sessions. */
type Part = EventFrame & { sessions: GatewaySession[] };

interface Delivery {
  event: GatewayEvent | undefined;
  publishedAt: number | undefined;
  parts: Part[] | Promise<Part[]>;
  tag: FrameTag | undefined;
  /** A point in the queue rather than a dispatch: runs once everything before it has been delivered. */
  barrier?: () => void;
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
    /** Seconds from publish to the last session written, per dispatch that reached anyone (metrics). */
    private readonly onDelivered: (seconds: number) => void = () => {},
  ) {}

  onDispatch(dispatch: Dispatch, mark?: BusMark): void {
    let candidates = this.candidates(dispatch);
    // Index changes apply at receipt, so the next dispatch already sees the new membership.
    this.updateIndexes(dispatch, candidates);
    candidates = withIntent(dispatch, candidates);
    const { audience } = dispatch;
    let parts: Part[] | Promise<Part[]>;
    if (audience.kind === 'visibility') parts = candidates.length === 0 ? [] : this.visibility(audience, candidates);
    else if (dispatch.event === 'PRESENCE_UPDATE' && audience.kind === 'guild') {
      const recipients = this.presenceFollowers(audience.guildId, dispatch.payload.user.id, candidates);
      const part = (sessions: GatewaySession[]): Part[] => [{ ...frameOf(dispatch), sessions }];
      parts = Array.isArray(recipients) ? part(recipients) : recipients.then(part);
    } else if (dispatch.event === 'GUILD_CREATE' && !dispatch.payload.unavailable)
      parts = guildCreateParts(dispatch.payload, candidates);
    else {
      const recipients =
        candidates.length === 0
          ? candidates
          : audience.kind === 'channel'
            ? this.filter(candidates, (userId) =>
                this.chat.canViewChannel(userId, audience.guildId, audience.channelId),
              )
            : audience.kind === 'guild' && audience.permission !== undefined
              ? this.filter(candidates, (userId) =>
                  this.chat.holdsGuildPermission(userId, audience.guildId, audience.permission as string),
                )
              : candidates;
      const part = (sessions: GatewaySession[]): Part[] => [{ ...frameOf(dispatch), sessions }];
      parts = Array.isArray(recipients) ? part(recipients) : recipients.then(part);
    }
    const tag = mark && { mark, guildId: audience.kind === 'users' ? undefined : audience.guildId };
    if (this.queue.length === 0 && !this.draining && Array.isArray(parts)) {
      this.send(parts, dispatch.publishedAt, tag);
      return;
    }
    this.queue.push({ event: dispatch.event, parts, publishedAt: dispatch.publishedAt, tag });
    void this.drain();
  }

  /** Runs `then` once every dispatch received so far has reached its sessions (a hand-off's snapshot point). */
  whenDelivered(then: () => void): void {
    if (this.queue.length === 0 && !this.draining) {
      then();
      return;
    }
    this.queue.push({ event: undefined, parts: [], publishedAt: undefined, tag: undefined, barrier: then });
    void this.drain();
  }

  /**
   * A change that may have moved who sees which channels: the read model compares the guild's members connected
   * here before and after it, and each who lost a channel gets CHANNEL_DELETE, each who gained one CHANNEL_CREATE
   * (each frame serialised once per channel).
   */
  private async visibility(
    audience: Extract<Dispatch['audience'], { kind: 'visibility' }>,
    candidates: GatewaySession[],
  ): Promise<Part[]> {
    const { before } = audience;
    // Only the members named in `held`/`notHeld` can be concerned when no overwrite or owner changed and every
    // role whose permissions changed lists all its former holders there (a deleted role).
    const scoped =
      before.overwrites === undefined &&
      before.ownerId === undefined &&
      Object.keys(before.roles ?? {}).every((roleId) => before.held?.[roleId] !== undefined)
        ? new Set([...Object.values(before.held ?? {}), ...Object.values(before.notHeld ?? {})].flat())
        : undefined;
    const sessionsOf = new Map<string, GatewaySession[]>();
    for (const session of candidates) {
      if (scoped && !scoped.has(session.userId)) continue;
      const list = sessionsOf.get(session.userId);
      if (list) list.push(session);
      else sessionsOf.set(session.userId, [session]);
    }
    const changes = await this.chat.visibilityChanges(audience.guildId, [...sessionsOf.keys()], before);
    return changes.map((change) => ({
      event: change.event,
      payload: change.channel,
      sessions: change.userIds.flatMap((userId) => sessionsOf.get(userId) ?? []),
    }));
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

  /**
   * Keeps guild → sessions current from the membership events themselves (docs/gateway.md). The switch names
   * every event of the catalogue (src/domains/events/catalogue.ts): a new event does not compile until it is
   * placed here, as one that moves sessions between guilds or one that does not.
   */
  private updateIndexes(dispatch: Dispatch, candidates: GatewaySession[]): void {
    switch (dispatch.event) {
      case 'GUILD_CREATE': {
        const guildId = stringField(dispatch.payload, 'id');
        if (guildId && !dispatch.payload.unavailable) for (const s of candidates) this.registry.joinGuild(s, guildId);
        return;
      }
      case 'GUILD_DELETE': {
        const guildId = dispatch.payload.id;
        if (guildId) for (const s of candidates) this.registry.leaveGuild(s, guildId);
        return;
      }
      case 'GUILD_MEMBER_ADD': {
        const guildId = stringField(dispatch.payload, 'guild_id');
        const userId = nestedUserId(dispatch.payload);
        if (guildId && userId) for (const s of this.registry.ofUser(userId) ?? []) this.registry.joinGuild(s, guildId);
        return;
      }
      case 'GUILD_MEMBER_REMOVE': {
        const guildId = dispatch.payload.guild_id;
        const userId = nestedUserId(dispatch.payload);
        if (guildId && userId)
          for (const s of [...(this.registry.ofUser(userId) ?? [])]) this.registry.leaveGuild(s, guildId);
        return;
      }
      // Events that move no session between guilds.
      case 'READY':
      case 'RESUMED':
      case 'USER_UPDATE':
      case 'USER_SETTINGS_UPDATE':
      case 'USER_GUILD_SETTINGS_UPDATE':
      case 'USER_NOTE_UPDATE':
      case 'RELATIONSHIP_ADD':
      case 'RELATIONSHIP_UPDATE':
      case 'RELATIONSHIP_REMOVE':
      case 'GUILD_UPDATE':
      case 'GUILD_MEMBER_UPDATE':
      case 'GUILD_MEMBERS_CHUNK':
      case 'GUILD_ROLE_CREATE':
      case 'GUILD_ROLE_UPDATE':
      case 'GUILD_ROLE_UPDATE_BULK':
      case 'GUILD_ROLE_DELETE':
      case 'GUILD_BAN_ADD':
      case 'GUILD_BAN_REMOVE':
      case 'GUILD_EMOJIS_UPDATE':
      case 'GUILD_STICKERS_UPDATE':
      case 'GUILD_AUDIT_LOG_ENTRY_CREATE':
      case 'INVITE_CREATE':
      case 'INVITE_DELETE':
      case 'WEBHOOKS_UPDATE':
      case 'CHANNEL_CREATE':
      case 'CHANNEL_UPDATE':
      case 'CHANNEL_DELETE':
      case 'CHANNEL_PINS_UPDATE':
      case 'CHANNEL_PINS_ACK':
      case 'CHANNEL_RECIPIENT_ADD':
      case 'CHANNEL_RECIPIENT_REMOVE':
      case 'TYPING_START':
      case 'MESSAGE_CREATE':
      case 'MESSAGE_UPDATE':
      case 'MESSAGE_DELETE':
      case 'MESSAGE_DELETE_BULK':
      case 'MESSAGE_REACTION_ADD':
      case 'MESSAGE_REACTION_REMOVE':
      case 'MESSAGE_REACTION_REMOVE_ALL':
      case 'MESSAGE_REACTION_REMOVE_EMOJI':
      case 'MESSAGE_ACK':
      case 'SAVED_MESSAGE_CREATE':
      case 'SAVED_MESSAGE_DELETE':
      case 'THREAD_CREATE':
      case 'THREAD_UPDATE':
      case 'THREAD_DELETE':
      case 'THREAD_LIST_SYNC':
      case 'THREAD_MEMBER_UPDATE':
      case 'THREAD_MEMBERS_UPDATE':
      case 'PRESENCE_UPDATE':
      case 'INTERACTION_CREATE':
      case 'INTERACTION_SUCCESS':
      case 'INTERACTION_MODAL_CREATE':
      case 'APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE':
      case 'APPLICATION_COMMAND_PERMISSIONS_UPDATE':
      case 'VOICE_STATE_UPDATE':
      case 'VOICE_SERVER_UPDATE':
      case 'CALL_CREATE':
      case 'CALL_UPDATE':
      case 'CALL_DELETE':
      case 'CHANNEL_VISIBILITY':
        return;
      default:
        unhandled(dispatch);
    }
  }

  /**
   * Of the guild's sessions, those that get a member's PRESENCE_UPDATE (docs/gateway.md#large-guilds): every
   * session that sent `intents` (`withIntent` kept those with GUILD_PRESENCES), the member's own sessions, and a
   * session without `intents` when the guild is not large for it or it follows the member there (op 14). The
   * member count is read only when a session's answer depends on it.
   */
  private presenceFollowers(
    guildId: string,
    memberId: string,
    candidates: GatewaySession[],
  ): GatewaySession[] | Promise<GatewaySession[]> {
    const undecided: GatewaySession[] = [];
    const recipients: GatewaySession[] = [];
    for (const session of candidates) {
      if (
        session.intents !== undefined ||
        session.userId === memberId ||
        // A session collecting for a hand-off does not know its subscriptions yet: it keeps everything.
        session.membershipChanges !== undefined ||
        session.subscriptions.follows(guildId, memberId)
      )
        recipients.push(session);
      else undecided.push(session);
    }
    if (undecided.length === 0) return recipients;
    return this.chat.memberCount(guildId).then(
      (count) => {
        for (const session of undecided) if (count <= session.largeThreshold) recipients.push(session);
        return recipients;
      },
      (error: Error) => {
        // Unknown size: the sessions whose delivery depends on it get nothing, the others still get theirs.
        this.log.error('gateway member count failed', { guildId, error: error.message });
        return recipients;
      },
    );
  }

  /** The candidates whose user passes `allowed`, asked once per user. */
  private async filter(
    candidates: GatewaySession[],
    allowed: (userId: string) => Promise<boolean>,
  ): Promise<GatewaySession[]> {
    const decisions = new Map<string, Promise<boolean>>();
    for (const session of candidates)
      if (!decisions.has(session.userId)) decisions.set(session.userId, allowed(session.userId));
    const passed = new Set<string>();
    await Promise.all(
      [...decisions].map(async ([userId, decision]) => {
        if (await decision) passed.add(userId);
      }),
    );
    return candidates.filter((s) => passed.has(s.userId));
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const next = this.queue[0] as Delivery;
        if (next.barrier) {
          this.queue.shift();
          try {
            next.barrier();
          } catch (error) {
            this.log.error('gateway fan-out barrier failed', { error: (error as Error).message });
          }
          continue;
        }
        let parts: Part[] = [];
        try {
          parts = await next.parts;
        } catch (error) {
          // A failed permission check delivers to nobody rather than to everybody.
          this.log.error('gateway fan-out failed', { event: next.event, error: (error as Error).message });
        }
        this.queue.shift();
        this.send(parts, next.publishedAt, next.tag);
      }
    } finally {
      this.draining = false;
    }
  }

  private send(parts: Part[], publishedAt: number | undefined, tag: FrameTag | undefined): void {
    let reached = false;
    for (const part of parts) {
      const { sessions } = part;
      if (sessions.length === 0) continue;
      reached = true;
      const prefix = framePrefix(part);
      for (const session of sessions) if (this.registry.get(session.id) === session) session.deliver(prefix, tag);
    }
    if (reached && publishedAt !== undefined) this.onDelivered((Date.now() - publishedAt) / 1000);
  }
}

/** Discord's privileged intents, the only ones applied (docs/gateway.md#intents). */
export const INTENTS = { GUILD_MEMBERS: 1 << 1, GUILD_PRESENCES: 1 << 8 } as const;

/**
 * The intent a guild-wide dispatch needs: member events need GUILD_MEMBERS, a guild's PRESENCE_UPDATE needs
 * GUILD_PRESENCES (a friend's, audience `users`, needs none).
 */
function intentOf(dispatch: Dispatch): number | undefined {
  if (dispatch.audience.kind !== 'guild') return undefined;
  switch (dispatch.event) {
    case 'GUILD_MEMBER_ADD':
    case 'GUILD_MEMBER_UPDATE':
    case 'GUILD_MEMBER_REMOVE':
      return INTENTS.GUILD_MEMBERS;
    case 'PRESENCE_UPDATE':
      return INTENTS.GUILD_PRESENCES;
    default:
      return undefined;
  }
}

/**
 * The candidates that asked for the dispatch's intent (or sent no `intents`). A member event about a session's
 * own user always reaches it, as Discord sends a bot its own member updates whatever its intents.
 */
function withIntent(dispatch: Dispatch, candidates: GatewaySession[]): GatewaySession[] {
  const intent = intentOf(dispatch);
  if (intent === undefined) return candidates;
  const subject =
    dispatch.event === 'PRESENCE_UPDATE' ? undefined : nestedUserId(dispatch.payload as { user?: unknown });
  return candidates.filter(
    (s) => s.intents === undefined || (s.intents & intent) !== 0 || (subject !== undefined && s.userId === subject),
  );
}

/**
 * GUILD_CREATE built for several sessions (a join) judges `large` by Discord's highest threshold; the sessions
 * whose `large_threshold` is lower get it as large, without presences (docs/gateway.md#large-guilds).
 */
function guildCreateParts(payload: GuildPayloadView, sessions: GatewaySession[]): Part[] {
  if (payload.large) return [{ event: 'GUILD_CREATE', payload, sessions }];
  const asLarge: GatewaySession[] = [];
  const asIs: GatewaySession[] = [];
  for (const session of sessions) (payload.member_count > session.largeThreshold ? asLarge : asIs).push(session);
  const parts: Part[] = [{ event: 'GUILD_CREATE', payload, sessions: asIs }];
  if (asLarge.length > 0)
    parts.push({ event: 'GUILD_CREATE', payload: { ...payload, large: true, presences: [] }, sessions: asLarge });
  return parts;
}

/** The event and payload of a dispatch as one frame part. */
function frameOf({ event, payload }: Dispatch): EventFrame {
  return { event, payload } as EventFrame;
}

/** Compiles only when every event of the catalogue has its case; at run time, an unknown event is left alone. */
function unhandled(_dispatch: never): void {}

function stringField(payload: Record<string, unknown>, key: string): string | undefined {
  const value = payload[key];
  return typeof value === 'string' ? value : undefined;
}

function nestedUserId(payload: { user?: unknown }): string | undefined {
  const user = payload.user;
  if (typeof user !== 'object' || user === null) return undefined;
  const id = (user as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}
