import { z } from 'zod';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { partialUser } from '../../identity/user-record.ts';
import type { VisibilityBefore } from '../events/dispatch.ts';
import { type GuildContext, pathId } from './access.ts';
import { type ChatDeps, limits, nullableText, snowflake } from './deps.ts';
import { AUDIT_LOG_EVENTS, auditChanges, auditReason } from './guild-audit.ts';
import { computeBasePermissions, has, PERMISSIONS } from './permissions.ts';
import { iso, MEMBER_COLUMNS, type MemberRow } from './rows.ts';
import { type MemberView, memberView } from './views.ts';

/** The longest timeout Discord allows. */
const MAX_TIMEOUT_MS = 28 * 24 * 3600 * 1000;

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(1),
  after: snowflake.optional(),
});

/** A data URI of at most 10 MiB of image (the media service checks the bytes themselves). */
const imageField = z
  .string()
  .max(14 * 1024 * 1024)
  .nullish();

const patchMemberBody = z.object({
  nick: nullableText(32),
  // The member's own per-guild profile (Discord's "Modify Current Member"): only ever one's own.
  avatar: imageField,
  banner: imageField,
  bio: nullableText(320),
  roles: z.array(snowflake).max(250).nullish(),
  mute: z.boolean().nullish(),
  deaf: z.boolean().nullish(),
  communication_disabled_until: z.iso.datetime({ offset: true }).nullish(),
  channel_id: snowflake.nullish(),
});

/** A member's fields as MEMBER_UPDATE audit entries show them (roles go to MEMBER_ROLE_UPDATE). */
function memberAuditFields(m: MemberRow): Record<string, unknown> {
  return {
    nick: m.nick,
    mute: m.mute,
    deaf: m.deaf,
    communication_disabled_until: iso(m.communication_disabled_until),
  };
}
const MEMBER_AUDIT_KEYS = ['nick', 'mute', 'deaf', 'communication_disabled_until'] as const;

/** A member's role change as `events.visibility` describes it: roles they held before, and roles new to them. */
function roleChange(before: MemberRow, after: MemberRow): VisibilityBefore {
  const held: Record<string, string[]> = {};
  const notHeld: Record<string, string[]> = {};
  for (const id of before.roles) if (!after.roles.includes(id)) held[id] = [after.user_id];
  for (const id of after.roles) if (!before.roles.includes(id)) notHeld[id] = [after.user_id];
  return { held, notHeld };
}

export function memberRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, events, audit } = deps;
  const { db } = services;

  /** MEMBER_UPDATE and MEMBER_ROLE_UPDATE entries for what changed between two rows of one member. */
  async function auditMemberChange(
    guild: GuildContext,
    before: MemberRow,
    after: MemberRow,
    userId: string,
    reason: string | null,
  ): Promise<void> {
    const changes = auditChanges(memberAuditFields(before), memberAuditFields(after), MEMBER_AUDIT_KEYS);
    if (changes.length > 0)
      await audit.record({
        guildId: guild.guildId,
        action: AUDIT_LOG_EVENTS.MEMBER_UPDATE,
        userId,
        targetId: after.user_id,
        changes,
        reason,
      });
    const had = new Set(before.roles);
    const has = new Set(after.roles);
    const named = (ids: string[]) => ids.map((id) => ({ id, name: guild.role(id)?.name ?? '' }));
    const added = named(after.roles.filter((id) => !had.has(id)));
    const removed = named(before.roles.filter((id) => !has.has(id)));
    if (added.length === 0 && removed.length === 0) return;
    await audit.record({
      guildId: guild.guildId,
      action: AUDIT_LOG_EVENTS.MEMBER_ROLE_UPDATE,
      userId,
      targetId: after.user_id,
      changes: [
        ...(added.length > 0 ? [{ key: '$add', new_value: added }] : []),
        ...(removed.length > 0 ? [{ key: '$remove', new_value: removed }] : []),
      ],
      reason,
    });
  }

  /** `@me` or a snowflake; the target must be a member of the guild. */
  async function targetMember(guild: GuildContext, rawId: string | undefined): Promise<MemberRow> {
    if (rawId === '@me') return guild.member;
    const userId = pathId(rawId, 'UNKNOWN_MEMBER');
    if (userId === guild.userId) return guild.member;
    const member = await store.member(guild.guildId, userId);
    if (!member) throw new ApiError('UNKNOWN_MEMBER');
    return member;
  }

  async function publishMemberUpdate(guildId: string, member: MemberRow): Promise<MemberView> {
    const user = await store.user(member.user_id);
    const view = memberView(member, user);
    await events.invalidate({ guildId, userId: member.user_id });
    await events.guild('GUILD_MEMBER_UPDATE', guildId, view);
    return view;
  }

  return [
    route({
      method: 'GET',
      path: '/guilds/:guildId/members',
      policy: 'user',
      rateLimit: limits.read('guilds:members'),
      query: listQuery,
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        const rows = await db.query<MemberRow>(
          `SELECT ${MEMBER_COLUMNS} FROM members m WHERE m.guild_id = $1 AND m.user_id > $2 ORDER BY m.user_id LIMIT $3`,
          [guild.guildId, ctx.query.after ?? '0', ctx.query.limit],
        );
        const users = await store.usersByIds(rows.map((r) => r.user_id));
        return rows.map((row) => memberView(row, users.get(row.user_id)));
      },
    }),

    route({
      method: 'GET',
      path: '/guilds/:guildId/members/:userId',
      policy: 'user',
      rateLimit: limits.read('guilds:members'),
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        const member = await targetMember(guild, ctx.params.userId);
        return memberView(member, await store.user(member.user_id));
      },
    }),

    route({
      method: 'PATCH',
      path: '/guilds/:guildId/members/:userId',
      policy: 'user',
      rateLimit: limits.write('guilds:members'),
      body: patchMemberBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guild(guildId, ctx.user.id, ctx.now);
        const target = await targetMember(guild, ctx.params.userId);
        const self = target.user_id === guild.userId;
        const body = ctx.body;
        const sets: string[] = [];
        const values: unknown[] = [guildId, target.user_id];
        const set = (column: string, value: unknown) => {
          values.push(value);
          sets.push(`${column} = $${values.length}`);
        };

        // A per-guild profile is the member's own: no permission lets anyone else set it (Discord's "Modify
        // Guild Member" has no such fields), so naming another member with them is refused.
        const profileChange = body.avatar !== undefined || body.banner !== undefined || body.bio !== undefined;
        if (profileChange && !self) throw new ApiError('MISSING_PERMISSIONS');
        if (body.nick !== undefined) {
          if (self) {
            if (!guild.can(PERMISSIONS.CHANGE_NICKNAME) && !guild.can(PERMISSIONS.MANAGE_NICKNAMES))
              throw new ApiError('MISSING_PERMISSIONS');
          } else {
            guild.require(PERMISSIONS.MANAGE_NICKNAMES);
            guild.requireOutranks(target);
          }
          set('nick', body.nick);
        }
        if (body.roles !== undefined && body.roles !== null) {
          guild.require(PERMISSIONS.MANAGE_ROLES);
          const wanted = [...new Set(body.roles.filter((id) => id !== guildId))];
          const before = new Set(target.roles);
          const after = new Set(wanted);
          const changed = [...wanted.filter((id) => !before.has(id)), ...target.roles.filter((id) => !after.has(id))];
          for (const roleId of changed) {
            const role = guild.role(roleId);
            if (!role) throw new ApiError('UNKNOWN_ROLE');
            if (role.managed) throw new ApiError('MISSING_PERMISSIONS');
            guild.requireBelowTop(role);
          }
          set('roles', wanted);
          sets[sets.length - 1] += '::bigint[]';
        }
        if (body.mute !== undefined && body.mute !== null) {
          guild.require(PERMISSIONS.MUTE_MEMBERS);
          set('mute', body.mute);
        }
        if (body.deaf !== undefined && body.deaf !== null) {
          guild.require(PERMISSIONS.DEAFEN_MEMBERS);
          set('deaf', body.deaf);
        }
        // Move or disconnect (voice): refused before anything is written.
        if (body.channel_id !== undefined)
          await services.voice.checkMove(guild, target.user_id, body.channel_id ?? null);
        if (body.communication_disabled_until !== undefined) {
          if (self) throw new ApiError('MISSING_PERMISSIONS');
          guild.require(PERMISSIONS.MODERATE_MEMBERS);
          guild.requireOutranks(target);
          const targetPermissions = computeBasePermissions({
            ...guild.subject,
            userId: target.user_id,
            memberRoleIds: target.roles,
          });
          if (has(targetPermissions, PERMISSIONS.ADMINISTRATOR)) throw new ApiError('MISSING_PERMISSIONS');
          const until = body.communication_disabled_until ? Date.parse(body.communication_disabled_until) : null;
          if (until !== null && until - ctx.now > MAX_TIMEOUT_MS)
            throw fieldError('communication_disabled_until', 'INVALID_FORMAT', 'A timeout lasts at most 28 days');
          set('communication_disabled_until', until === null || until <= ctx.now ? null : new Date(until));
        }
        // Images are stored only once every check has passed, so a refused request leaves no object behind.
        if (profileChange) {
          const owner = `${guildId}/${target.user_id}`;
          if (body.avatar !== undefined)
            set('avatar', await services.media.storeUserImage('guild-avatars', owner, body.avatar, 'avatar'));
          if (body.banner !== undefined)
            set('banner', await services.media.storeUserImage('guild-banners', owner, body.banner, 'banner'));
          if (body.bio !== undefined) set('bio', body.bio);
        }
        const voiceChange = body.channel_id !== undefined || sets.some((s) => /^(mute|deaf) /.test(s));
        if (sets.length === 0) {
          if (voiceChange) await services.voice.applyMemberChange(guildId, target, { channelId: body.channel_id });
          return memberView(target, await store.user(target.user_id));
        }
        const [row] = await db.query<MemberRow>(
          `UPDATE members m SET ${sets.join(', ')} WHERE m.guild_id = $1 AND m.user_id = $2 RETURNING ${MEMBER_COLUMNS}`,
          values,
        );
        if (!row) throw new ApiError('UNKNOWN_MEMBER');
        await auditMemberChange(guild, target, row, ctx.user.id, auditReason(ctx.request.headers));
        const view = await publishMemberUpdate(guildId, row);
        // New roles may open or close channels: CHANNEL_CREATE/DELETE, then the member's clients resync the
        // guild's threads.
        if (body.roles !== undefined && body.roles !== null) {
          await events.visibility(guildId, roleChange(target, row));
          await services.chatCore.threads.syncMember(guildId, row.user_id);
        }
        if (voiceChange) await services.voice.applyMemberChange(guildId, row, { channelId: body.channel_id });
        return view;
      },
    }),

    route({
      method: 'DELETE',
      path: '/guilds/:guildId/members/:userId',
      policy: 'user',
      rateLimit: limits.write('guilds:members'),
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.KICK_MEMBERS);
        const target = await targetMember(guild, ctx.params.userId);
        guild.requireOutranks(target);
        const removed = await db.query('DELETE FROM members WHERE guild_id = $1 AND user_id = $2 RETURNING user_id', [
          guildId,
          target.user_id,
        ]);
        if (removed.length === 0) throw new ApiError('UNKNOWN_MEMBER');
        await events.invalidate({ guildId, userId: target.user_id });
        await audit.record({
          guildId,
          action: AUDIT_LOG_EVENTS.MEMBER_KICK,
          userId: ctx.user.id,
          targetId: target.user_id,
          reason: auditReason(ctx.request.headers),
        });
        const user = await store.user(target.user_id);
        await events.guild('GUILD_MEMBER_REMOVE', guildId, { user: user ? partialUser(user) : { id: target.user_id } });
        await events.users('GUILD_DELETE', [target.user_id], { id: guildId });
        return undefined;
      },
    }),

    ...(['PUT', 'DELETE'] as const).map((method) =>
      route({
        method,
        path: '/guilds/:guildId/members/:userId/roles/:roleId',
        policy: 'user',
        rateLimit: limits.write('guilds:members:roles'),
        async handler(ctx) {
          const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
          const guild = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_ROLES);
          const target = await targetMember(guild, ctx.params.userId);
          const role = guild.role(pathId(ctx.params.roleId, 'UNKNOWN_ROLE'));
          if (!role || role.id === guildId) throw new ApiError('UNKNOWN_ROLE');
          if (role.managed) throw new ApiError('MISSING_PERMISSIONS');
          guild.requireBelowTop(role);
          const holds = target.roles.includes(role.id);
          if ((method === 'PUT') === holds) return undefined;
          const [row] = await db.query<MemberRow>(
            method === 'PUT'
              ? `UPDATE members m SET roles = array_append(roles, $3::bigint) WHERE m.guild_id = $1 AND m.user_id = $2 RETURNING ${MEMBER_COLUMNS}`
              : `UPDATE members m SET roles = array_remove(roles, $3::bigint) WHERE m.guild_id = $1 AND m.user_id = $2 RETURNING ${MEMBER_COLUMNS}`,
            [guildId, target.user_id, role.id],
          );
          if (!row) throw new ApiError('UNKNOWN_MEMBER');
          await auditMemberChange(guild, target, row, ctx.user.id, auditReason(ctx.request.headers));
          await publishMemberUpdate(guildId, row);
          await events.visibility(guildId, roleChange(target, row));
          await services.chatCore.threads.syncMember(guildId, row.user_id);
          return undefined;
        },
      }),
    ),
  ];
}
