import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { type PartialUser, partialUser, type UserRecord } from '../../identity/user-record.ts';
import { randomBase62 } from '../../platform/crypto/tokens.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { pathId, requireChannel } from './access.ts';
import { type ChatDeps, guildCounts, limits } from './deps.ts';
import { AUDIT_LOG_EVENTS, auditChanges, auditReason } from './guild-audit.ts';
import { INVITE_CODE_PATTERN, type InviteBundle, isLiveInvite } from './guild-joins.ts';
import { PERMISSIONS } from './permissions.ts';
import { CHANNEL_TYPES, type InviteRow, iso } from './rows.ts';

/** Live invites per guild. */
export const MAX_INVITES = 1000;
const INVITE_CODE_LENGTH = 8;

const createInviteBody = z.object({
  max_age: z.number().int().min(0).max(604800).optional(),
  max_uses: z.number().int().min(0).max(100).optional(),
  temporary: z.boolean().optional(),
  unique: z.boolean().optional(),
});

/** An invite (`inviteView`); the metadata (`created_at`, `uses`, `max_uses`, `max_age`) where asked for. */
export type InviteView = {
  code: string;
  type: 0;
  guild: { id: string; name: string; icon: string | null; features: string[] };
  guild_id: string;
  channel: { id: string; name: string | null; type: number };
  channel_id: string;
  inviter: PartialUser | null;
  member_count: number;
  presence_count: number;
  approximate_member_count: number;
  approximate_presence_count: number;
  expires_at: string | null;
  temporary: boolean;
  created_at?: string | null;
  uses?: number;
  max_uses?: number;
  max_age?: number;
};

export function inviteView(
  bundle: InviteBundle,
  inviter: UserRecord | undefined,
  counts: { members: number; presences: number },
  withMetadata: boolean,
): InviteView {
  const { invite, guild, channel } = bundle;
  const view: InviteView = {
    code: invite.code,
    type: 0,
    guild: { id: guild.id, name: guild.name, icon: guild.icon, features: guild.features },
    guild_id: guild.id,
    channel: { id: channel.id, name: channel.name, type: channel.type },
    channel_id: channel.id,
    inviter: inviter ? partialUser(inviter) : null,
    member_count: counts.members,
    presence_count: counts.presences,
    approximate_member_count: counts.members,
    approximate_presence_count: counts.presences,
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

/** An invite's fields as its audit entries show them (Discord's keys); invite entries have no target id. */
function inviteAuditFields(i: InviteRow): Record<string, unknown> {
  return {
    code: i.code,
    channel_id: i.channel_id,
    inviter_id: i.inviter_id,
    uses: i.uses,
    max_uses: i.max_uses,
    max_age: i.max_age,
    temporary: i.temporary,
  };
}
const INVITE_AUDIT_KEYS = ['code', 'channel_id', 'inviter_id', 'uses', 'max_uses', 'max_age', 'temporary'] as const;

export function inviteRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, events, audit } = deps;
  const { db } = services;

  const { joins } = services.chatCore;
  const bundles = joins.bundles.bind(joins);

  async function render(list: InviteBundle[], withMetadata: boolean): Promise<InviteView[]> {
    const inviters = await store.usersByIds(list.flatMap((b) => (b.invite.inviter_id ? [b.invite.inviter_id] : [])));
    const counts = new Map<string, { members: number; presences: number }>();
    for (const guildId of new Set(list.map((b) => b.guild.id))) counts.set(guildId, await guildCounts(store, guildId));
    return list.map((b) =>
      inviteView(
        b,
        b.invite.inviter_id ? inviters.get(b.invite.inviter_id) : undefined,
        counts.get(b.guild.id) ?? { members: 0, presences: 0 },
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
        await audit.record({
          guildId: channel.guild_id,
          action: AUDIT_LOG_EVENTS.INVITE_CREATE,
          userId: ctx.user.id,
          targetId: null,
          changes: auditChanges(undefined, inviteAuditFields((bundle as InviteBundle).invite), INVITE_AUDIT_KEYS),
          reason: auditReason(ctx.request.headers),
        });
        const [view] = await render([bundle as InviteBundle], true);
        if (view)
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
          list.filter((b) => isLiveInvite(b.invite, ctx.now)),
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
          list.filter((b) => isLiveInvite(b.invite, ctx.now)),
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
        const bundle = await joins.liveInvite(ctx.params.code, ctx.now);
        return (await render([bundle], false))[0];
      },
    }),

    route({
      method: 'POST',
      path: '/invites/:code',
      policy: 'user-only',
      rateLimit: limits.inviteAccept,
      async handler(ctx) {
        const bundle = await joins.accept(ctx.params.code, ctx.user, ctx.now);
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
        if (!code || !INVITE_CODE_PATTERN.test(code)) throw new ApiError('UNKNOWN_INVITE');
        const [bundle] = await bundles('i.code = $1', [code]);
        if (!bundle) throw new ApiError('UNKNOWN_INVITE');
        if (bundle.invite.inviter_id !== ctx.user.id)
          await access.guildWith(bundle.guild.id, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_GUILD);
        const deleted = await db.query('DELETE FROM invites WHERE code = $1 RETURNING code', [code]);
        if (deleted.length === 0) throw new ApiError('UNKNOWN_INVITE');
        await audit.record({
          guildId: bundle.guild.id,
          action: AUDIT_LOG_EVENTS.INVITE_DELETE,
          userId: ctx.user.id,
          targetId: null,
          changes: auditChanges(inviteAuditFields(bundle.invite), undefined, INVITE_AUDIT_KEYS),
          reason: auditReason(ctx.request.headers),
        });
        await events.channelViewers('INVITE_DELETE', bundle.guild.id, bundle.channel.id, {
          code,
          channel_id: bundle.channel.id,
          guild_id: bundle.guild.id,
        });
        return undefined;
      },
    }),
  ];
}
