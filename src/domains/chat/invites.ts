import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { partialUser, type UserRecord } from '../../identity/user-record.ts';
import { randomBase62 } from '../../platform/crypto/tokens.ts';
import { isUniqueViolation, type Queryable } from '../../platform/db/database.ts';
import { pathId, requireChannel } from './access.ts';
import { type ChatDeps, limits } from './deps.ts';
import { buildGuildPayload } from './guild-payload.ts';
import { requireRoomForAnotherGuild } from './guilds.ts';
import { MESSAGE_TYPES } from './message-service.ts';
import { PERMISSIONS } from './permissions.ts';
import {
  CHANNEL_TYPES,
  type ChannelRow,
  type GuildRow,
  type InviteRow,
  iso,
  MEMBER_COLUMNS,
  type MemberRow,
} from './rows.ts';
import { memberView } from './views.ts';

/** Live invites per guild. */
export const MAX_INVITES = 1000;
const INVITE_CODE_LENGTH = 8;
const CODE_PATTERN = /^[A-Za-z0-9]{1,32}$/;

const createInviteBody = z.object({
  max_age: z.number().int().min(0).max(604800).optional(),
  max_uses: z.number().int().min(0).max(100).optional(),
  temporary: z.boolean().optional(),
  unique: z.boolean().optional(),
});

interface InviteBundle {
  invite: InviteRow;
  guild: GuildRow;
  channel: ChannelRow;
}

function isLive(invite: InviteRow, now: number): boolean {
  if (invite.expires_at && new Date(invite.expires_at).getTime() <= now) return false;
  return invite.max_uses === 0 || invite.uses < invite.max_uses;
}

export function inviteView(
  bundle: InviteBundle,
  inviter: UserRecord | undefined,
  memberCount: number,
  withMetadata: boolean,
): Record<string, unknown> {
  const { invite, guild, channel } = bundle;
  const view: Record<string, unknown> = {
    code: invite.code,
    type: 0,
    guild: { id: guild.id, name: guild.name, icon: guild.icon, features: guild.features },
    guild_id: guild.id,
    channel: { id: channel.id, name: channel.name, type: channel.type },
    channel_id: channel.id,
    inviter: inviter ? partialUser(inviter) : null,
    member_count: memberCount,
    presence_count: 0,
    approximate_member_count: memberCount,
    approximate_presence_count: 0,
    expires_at: iso(invite.expires_at),
    temporary: invite.temporary,
  };
  if (withMetadata) {
    view.created_at = iso(invite.created_at);
    view.uses = invite.uses;
    view.max_uses = invite.max_uses;
    view.max_age = invite.max_age;
  }
  return view;
}

export function inviteRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, events, messages } = deps;
  const { db } = services;

  /** Invites with their guild and channel: three indexed queries for any number of invites. */
  async function bundles(where: string, params: unknown[], tx: Queryable = db): Promise<InviteBundle[]> {
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

  async function liveInvite(rawCode: string | undefined, now: number): Promise<InviteBundle> {
    if (!rawCode || !CODE_PATTERN.test(rawCode)) throw new ApiError('UNKNOWN_INVITE');
    const [bundle] = await bundles('i.code = $1', [rawCode]);
    if (!bundle || !isLive(bundle.invite, now)) throw new ApiError('UNKNOWN_INVITE');
    return bundle;
  }

  async function render(list: InviteBundle[], withMetadata: boolean): Promise<Record<string, unknown>[]> {
    const inviters = await store.usersByIds(list.flatMap((b) => (b.invite.inviter_id ? [b.invite.inviter_id] : [])));
    const counts = new Map<string, number>();
    for (const guildId of new Set(list.map((b) => b.guild.id))) counts.set(guildId, await store.memberCount(guildId));
    return list.map((b) =>
      inviteView(
        b,
        b.invite.inviter_id ? inviters.get(b.invite.inviter_id) : undefined,
        counts.get(b.guild.id) ?? 0,
        withMetadata,
      ),
    );
  }

  return [
    route({
      method: 'POST',
      path: '/channels/:channelId/invites',
      policy: 'user',
      rateLimit: limits.write('channels:invites'),
      body: createInviteBody,
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const { channel } = channelAccess;
        if (channel.guild_id === null || channel.type === CHANNEL_TYPES.GUILD_CATEGORY)
          throw new ApiError('UNKNOWN_CHANNEL');
        if (channelAccess.thread) throw new ApiError('CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
        requireChannel(channelAccess, PERMISSIONS.CREATE_INSTANT_INVITE);
        const maxAge = ctx.body.max_age ?? 0;
        const maxUses = ctx.body.max_uses ?? 0;
        const temporary = ctx.body.temporary ?? false;
        if (!ctx.body.unique) {
          // Like Discord: without `unique`, an identical live invite from the same inviter is handed back.
          const [same] = await bundles(
            `i.channel_id = $1 AND i.inviter_id = $2 AND i.max_age = $3 AND i.max_uses = $4 AND i.temporary = $5
             AND (i.expires_at IS NULL OR i.expires_at > $6) AND (i.max_uses = 0 OR i.uses < i.max_uses) LIMIT 1`,
            [channel.id, ctx.user.id, maxAge, maxUses, temporary, new Date(ctx.now)],
          );
          if (same) return (await render([same], true))[0];
        }
        const [count] = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM invites WHERE guild_id = $1 AND (expires_at IS NULL OR expires_at > $2)',
          [channel.guild_id, new Date(ctx.now)],
        );
        if ((count?.n ?? 0) >= MAX_INVITES) throw new ApiError('MAX_INVITES');
        let code = '';
        for (let attempt = 0; ; attempt++) {
          code = randomBase62(INVITE_CODE_LENGTH);
          try {
            await db.query(
              `INSERT INTO invites (code, guild_id, channel_id, inviter_id, max_age, max_uses, temporary, created_at, expires_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
              [
                code,
                channel.guild_id,
                channel.id,
                ctx.user.id,
                maxAge,
                maxUses,
                temporary,
                new Date(ctx.now),
                maxAge === 0 ? null : new Date(ctx.now + maxAge * 1000),
              ],
            );
            break;
          } catch (error) {
            if (!isUniqueViolation(error) || attempt >= 4) throw error;
          }
        }
        const [bundle] = await bundles('i.code = $1', [code]);
        const [view] = await render([bundle as InviteBundle], true);
        await events.channelViewers('INVITE_CREATE', channel.guild_id, channel.id, {
          ...view,
          guild_id: channel.guild_id,
        });
        return view;
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/invites',
      policy: 'user',
      rateLimit: limits.read('channels:invites'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        if (!channelAccess.guild) throw new ApiError('MISSING_PERMISSIONS');
        requireChannel(channelAccess, PERMISSIONS.MANAGE_CHANNELS);
        const list = await bundles('i.channel_id = $1 ORDER BY i.created_at', [channelAccess.channel.id]);
        return render(
          list.filter((b) => isLive(b.invite, ctx.now)),
          true,
        );
      },
    }),

    route({
      method: 'GET',
      path: '/guilds/:guildId/invites',
      policy: 'user',
      rateLimit: limits.read('guilds:invites'),
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_GUILD);
        const list = await bundles('i.guild_id = $1 ORDER BY i.created_at', [guildId]);
        return render(
          list.filter((b) => isLive(b.invite, ctx.now)),
          true,
        );
      },
    }),

    route({
      method: 'GET',
      path: '/invites/:code',
      policy: 'none',
      rateLimit: limits.read('invites'),
      async handler(ctx) {
        const bundle = await liveInvite(ctx.params.code, ctx.now);
        return (await render([bundle], false))[0];
      },
    }),

    route({
      method: 'POST',
      path: '/invites/:code',
      policy: 'user-only',
      rateLimit: limits.inviteAccept,
      async handler(ctx) {
        const bundle = await liveInvite(ctx.params.code, ctx.now);
        const guildId = bundle.guild.id;
        const userId = ctx.user.id;
        if (await store.isBanned(guildId, userId)) throw new ApiError('USER_BANNED_FROM_GUILD');
        if (await store.member(guildId, userId)) return (await render([bundle], false))[0];
        const joined = await db.transaction(async (tx) => {
          await requireRoomForAnotherGuild(tx, userId);
          const [member] = await tx.query<MemberRow>(
            `INSERT INTO members AS m (guild_id, user_id, joined_at) VALUES ($1, $2, $3)
             ON CONFLICT (guild_id, user_id) DO NOTHING RETURNING ${MEMBER_COLUMNS}`,
            [guildId, userId, new Date(ctx.now)],
          );
          if (!member) return undefined;
          const used = await tx.query(
            'UPDATE invites SET uses = uses + 1 WHERE code = $1 AND (max_uses = 0 OR uses < max_uses) RETURNING code',
            [bundle.invite.code],
          );
          if (used.length === 0) throw new ApiError('UNKNOWN_INVITE');
          return member;
        });
        if (joined) {
          await events.invalidate({ guildId, userId });
          await events.guild('GUILD_MEMBER_ADD', guildId, memberView(joined, ctx.user));
          const payload = await buildGuildPayload(store, guildId, userId, ctx.now);
          if (payload) await events.users('GUILD_CREATE', [userId], payload);
          await announceJoin(deps, bundle.guild, ctx.user, joined);
          bundle.invite.uses += 1;
        }
        return (await render([bundle], false))[0];
      },
    }),

    route({
      method: 'DELETE',
      path: '/invites/:code',
      policy: 'user',
      rateLimit: limits.write('invites'),
      async handler(ctx) {
        const code = ctx.params.code;
        if (!code || !CODE_PATTERN.test(code)) throw new ApiError('UNKNOWN_INVITE');
        const [bundle] = await bundles('i.code = $1', [code]);
        if (!bundle) throw new ApiError('UNKNOWN_INVITE');
        if (bundle.invite.inviter_id !== ctx.user.id)
          await access.guildWith(bundle.guild.id, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_GUILD);
        await db.query('DELETE FROM invites WHERE code = $1', [code]);
        await events.channelViewers('INVITE_DELETE', bundle.guild.id, bundle.channel.id, {
          code,
          channel_id: bundle.channel.id,
          guild_id: bundle.guild.id,
        });
        return undefined;
      },
    }),
  ];

  /** The "joined the server" system message (type 7) in the system channel, when there is one. */
  async function announceJoin(_deps: ChatDeps, guild: GuildRow, user: UserRecord, member: MemberRow): Promise<void> {
    if (!guild.system_channel_id) return;
    const channel = await store.channel(guild.system_channel_id);
    if (!channel || channel.type !== CHANNEL_TYPES.GUILD_TEXT) return;
    await messages.create({
      channel,
      author: user,
      content: '',
      canMentionEveryone: false,
      type: MESSAGE_TYPES.GUILD_MEMBER_JOIN,
      authorMember: member,
    });
  }
}
