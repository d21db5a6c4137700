import { ApiError } from '../../http/errors.ts';
import { partialUser, type UserRecord } from '../../identity/user-record.ts';
import type { Database, Queryable } from '../../platform/db/database.ts';
import type { ChatEvents } from './events.ts';
import { buildGuildPayload } from './guild-payload.ts';
import { requireRoomForAnotherGuild } from './guilds.ts';
import { MESSAGE_TYPES, type MessageService } from './message-service.ts';
import {
  CHANNEL_TYPES,
  type ChannelRow,
  type GuildRow,
  type InviteRow,
  MEMBER_COLUMNS,
  type MemberRow,
} from './rows.ts';
import type { ChatStore } from './store.ts';
import { memberView } from './views.ts';

/** What an invite code may look like; anything else names no invite. */
export const INVITE_CODE_PATTERN = /^[A-Za-z0-9]{1,32}$/;

export interface InviteBundle {
  invite: InviteRow;
  guild: GuildRow;
  channel: ChannelRow;
}

export function isLiveInvite(invite: InviteRow, now: number): boolean {
  if (invite.expires_at && new Date(invite.expires_at).getTime() <= now) return false;
  return invite.max_uses === 0 || invite.uses < invite.max_uses;
}

/**
 * Joining guilds through invites, and leaving the temporary memberships some invites grant. Shared by
 * `POST /invites/{code}`, registration and login with `invite_code`, and the gateway (which knows when a
 * user's last session goes away).
 */
export class GuildJoins {
  constructor(
    private readonly db: Database,
    private readonly store: ChatStore,
    private readonly events: ChatEvents,
    private readonly messages: MessageService,
  ) {}

  /** Invites with their guild and channel: three indexed queries for any number of invites. */
  async bundles(where: string, params: unknown[], tx: Queryable = this.db): Promise<InviteBundle[]> {
    const invites = await tx.query<InviteRow>(`SELECT i.* FROM invites i WHERE ${where}`, params);
    if (invites.length === 0) return [];
    const [guilds, channels] = await Promise.all([
      tx.query<GuildRow>('SELECT * FROM guilds WHERE id = ANY($1::bigint[])', [
        [...new Set(invites.map((i) => i.guild_id))],
      ]),
      tx.query<ChannelRow>('SELECT * FROM channels WHERE id = ANY($1::bigint[])', [
        [...new Set(invites.map((i) => i.channel_id))],
      ]),
    ]);
    const guildById = new Map(guilds.map((g) => [g.id, g]));
    const channelById = new Map(channels.map((c) => [c.id, c]));
    return invites.flatMap((invite) => {
      const guild = guildById.get(invite.guild_id);
      const channel = channelById.get(invite.channel_id);
      return guild && channel ? [{ invite, guild, channel }] : [];
    });
  }

  /** The invite behind a code while it can still be used; otherwise 404 `UNKNOWN_INVITE`. */
  async liveInvite(rawCode: string | undefined, now: number): Promise<InviteBundle> {
    if (!rawCode || !INVITE_CODE_PATTERN.test(rawCode)) throw new ApiError('UNKNOWN_INVITE');
    const [bundle] = await this.bundles('i.code = $1', [rawCode]);
    if (!bundle || !isLiveInvite(bundle.invite, now)) throw new ApiError('UNKNOWN_INVITE');
    return bundle;
  }

  /**
   * Joins `user` to the invite's guild (idempotent: a member stays as they are, except that a permanent
   * invite makes a temporary membership permanent). Refuses banned users (403 `USER_BANNED_FROM_GUILD`) and
   * dead invites (404 `UNKNOWN_INVITE`); `bundle.invite.uses` counts the use when one was made.
   */
  async accept(rawCode: string | undefined, user: UserRecord, now: number): Promise<InviteBundle> {
    const bundle = await this.liveInvite(rawCode, now);
    const guildId = bundle.guild.id;
    const userId = user.id;
    const temporary = bundle.invite.temporary;
    if (await this.store.isBanned(guildId, userId)) throw new ApiError('USER_BANNED_FROM_GUILD');
    if (await this.store.member(guildId, userId)) {
      if (!temporary)
        await this.db.query('UPDATE members SET temporary = false WHERE guild_id = $1 AND user_id = $2 AND temporary', [
          guildId,
          userId,
        ]);
      return bundle;
    }
    const joined = await this.db.transaction(async (tx) => {
      await requireRoomForAnotherGuild(tx, userId);
      const [member] = await tx.query<MemberRow>(
        `INSERT INTO members AS m (guild_id, user_id, joined_at, temporary) VALUES ($1, $2, $3, $4)
         ON CONFLICT (guild_id, user_id) DO NOTHING RETURNING ${MEMBER_COLUMNS}`,
        [guildId, userId, new Date(now), temporary],
      );
      if (!member) return undefined;
      const used = await tx.query(
        'UPDATE invites SET uses = uses + 1 WHERE code = $1 AND (max_uses = 0 OR uses < max_uses) RETURNING code',
        [bundle.invite.code],
      );
      if (used.length === 0) throw new ApiError('UNKNOWN_INVITE');
      return { member, restricted: await this.store.restrictJoinedGuild(userId, guildId, tx) };
    });
    if (joined) {
      if (joined.restricted)
        await this.events.users('USER_SETTINGS_UPDATE', [userId], { restricted_guilds: joined.restricted });
      await this.events.invalidate({ guildId, userId });
      await this.events.guild('GUILD_MEMBER_ADD', guildId, memberView(joined.member, user));
      const payload = await buildGuildPayload(this.store, guildId, userId, now);
      if (payload) await this.events.users('GUILD_CREATE', [userId], payload);
      await this.announceJoin(bundle.guild, user, joined.member);
      bundle.invite.uses += 1;
    }
    return bundle;
  }

  /**
   * The user's last gateway session went away: temporary memberships end, except where the member holds a
   * role by now (those become permanent, as on Discord) or owns the guild (ownership can be handed to anyone).
   * Removal looks like a kick without an audit entry: GUILD_MEMBER_REMOVE to the guild, GUILD_DELETE to the
   * user. Returns the guilds left.
   */
  async endTemporary(userId: string): Promise<string[]> {
    const removed = await this.db.transaction(async (tx) => {
      const gone = await tx.query<{ guild_id: string }>(
        `DELETE FROM members m WHERE m.user_id = $1 AND m.temporary AND cardinality(m.roles) = 0
           AND NOT EXISTS (SELECT 1 FROM guilds g WHERE g.id = m.guild_id AND g.owner_id = m.user_id)
         RETURNING m.guild_id::text AS guild_id`,
        [userId],
      );
      await tx.query('UPDATE members SET temporary = false WHERE user_id = $1 AND temporary', [userId]);
      return gone.map((row) => row.guild_id);
    });
    if (removed.length === 0) return removed;
    const user = await this.store.user(userId);
    for (const guildId of removed) {
      await this.events.invalidate({ guildId, userId });
      await this.events.guild('GUILD_MEMBER_REMOVE', guildId, { user: user ? partialUser(user) : { id: userId } });
      await this.events.users('GUILD_DELETE', [userId], { id: guildId });
    }
    return removed;
  }

  /** The "joined the server" system message (type 7) in the system channel, when there is one. */
  private async announceJoin(guild: GuildRow, user: UserRecord, member: MemberRow): Promise<void> {
    if (!guild.system_channel_id) return;
    const channel = await this.store.channel(guild.system_channel_id);
    if (!channel || channel.type !== CHANNEL_TYPES.GUILD_TEXT) return;
    await this.messages.create({
      channel,
      author: user,
      content: '',
      canMentionEveryone: false,
      type: MESSAGE_TYPES.GUILD_MEMBER_JOIN,
      authorMember: member,
    });
  }
}
