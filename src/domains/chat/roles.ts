import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { type GuildContext, pathId } from './access.ts';
import { bitfield, type ChatDeps, limits, snowflake } from './deps.ts';
import { emojiView, guildEmojis } from './emoji-store.ts';
import { AUDIT_LOG_EVENTS, auditChanges, auditReason } from './guild-audit.ts';
import { ALL_PERMISSIONS, PERMISSIONS, parsePermissions } from './permissions.ts';
import { ROLE_JSON, type RoleRow } from './rows.ts';
import { roleView } from './views.ts';

/** Roles per guild, @everyone included. */
export const MAX_GUILD_ROLES = 250;

const roleFields = {
  name: z.string().trim().min(1).max(100).optional(),
  color: z.number().int().min(0).max(0xffffff).nullish(),
  permissions: bitfield.nullish(),
  hoist: z.boolean().nullish(),
  mentionable: z.boolean().nullish(),
};
const createRoleBody = z.object(roleFields);
const patchRoleBody = z.object(roleFields);
const positionsBody = z
  .array(z.object({ id: snowflake, position: z.number().int().min(0).nullish() }))
  .min(1)
  .max(MAX_GUILD_ROLES);

/** Without ADMINISTRATOR a caller cannot hand out bits they do not hold themselves. */
function checkGrant(guild: GuildContext, permissions: bigint): void {
  if (!guild.can(PERMISSIONS.ADMINISTRATOR) && (permissions & ~guild.permissions) !== 0n)
    throw new ApiError('MISSING_PERMISSIONS');
}

const RETURN_ROLE = `RETURNING ${ROLE_JSON} AS j`;

/** A role's fields as its audit entries show them (Discord's keys). */
function roleAuditFields(r: RoleRow): Record<string, unknown> {
  return {
    name: r.name,
    permissions: parsePermissions(r.permissions).toString(),
    color: r.color,
    hoist: r.hoist,
    mentionable: r.mentionable,
  };
}
const ROLE_AUDIT_KEYS = ['name', 'permissions', 'color', 'hoist', 'mentionable'] as const;

export function roleRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, events, audit } = deps;
  const { db, ids } = services;

  function requireRole(guild: GuildContext, rawId: string | undefined): RoleRow {
    const role = guild.role(pathId(rawId, 'UNKNOWN_ROLE'));
    if (!role) throw new ApiError('UNKNOWN_ROLE');
    return role;
  }

  return [
    route({
      method: 'GET',
      path: '/guilds/:guildId/roles',
      policy: 'user',
      rateLimit: limits.read('guilds:roles'),
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        return guild.roles.map(roleView);
      },
    }),

    route({
      method: 'POST',
      path: '/guilds/:guildId/roles',
      policy: 'user',
      rateLimit: limits.create('guilds:roles'),
      body: createRoleBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_ROLES);
        const permissions = (ctx.body.permissions ?? 0n) & ALL_PERMISSIONS;
        checkGrant(guild, permissions);
        if (guild.roles.length >= MAX_GUILD_ROLES) throw new ApiError('MAX_GUILD_ROLES');
        // New roles start just above @everyone, where any role manager may manage them.
        const row = await db.transaction(async (tx) => {
          await tx.query('UPDATE roles SET position = position + 1 WHERE guild_id = $1 AND position >= 1', [guildId]);
          const [inserted] = await tx.query<{ j: RoleRow }>(
            `INSERT INTO roles AS r (id, guild_id, name, color, position, permissions, hoist, mentionable)
             VALUES ($1, $2, $3, $4, 1, $5, $6, $7) ${RETURN_ROLE}`,
            [
              ids.next(),
              guildId,
              ctx.body.name ?? 'new role',
              ctx.body.color ?? 0,
              permissions.toString(),
              ctx.body.hoist ?? false,
              ctx.body.mentionable ?? false,
            ],
          );
          return (inserted as { j: RoleRow }).j;
        });
        await events.invalidate({ guildId });
        await audit.record({
          guildId,
          action: AUDIT_LOG_EVENTS.ROLE_CREATE,
          userId: ctx.user.id,
          targetId: row.id,
          changes: auditChanges(undefined, roleAuditFields(row), ROLE_AUDIT_KEYS),
          reason: auditReason(ctx.request.headers),
        });
        const view = roleView(row);
        await events.guild('GUILD_ROLE_CREATE', guildId, { role: view });
        return view;
      },
    }),

    route({
      method: 'PATCH',
      path: '/guilds/:guildId/roles',
      policy: 'user',
      rateLimit: limits.write('guilds:roles'),
      body: positionsBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_ROLES);
        for (const entry of ctx.body) {
          const role = guild.role(entry.id);
          if (!role) throw new ApiError('UNKNOWN_ROLE');
          if (role.id === guildId) continue;
          guild.requireBelowTop(role);
          if (entry.position !== undefined && entry.position !== null && !(entry.position < guild.topPosition))
            throw new ApiError('MISSING_PERMISSIONS');
        }
        const roles = await db.transaction(async (tx) => {
          for (const entry of ctx.body) {
            if (entry.id === guildId || entry.position === undefined || entry.position === null) continue;
            await tx.query('UPDATE roles SET position = $3 WHERE guild_id = $1 AND id = $2', [
              guildId,
              entry.id,
              Math.max(1, entry.position),
            ]);
          }
          return store.roles(guildId, tx);
        });
        await events.invalidate({ guildId });
        const views = roles.map(roleView);
        await events.guild('GUILD_ROLE_UPDATE_BULK', guildId, { roles: views });
        return views;
      },
    }),

    route({
      method: 'PATCH',
      path: '/guilds/:guildId/roles/:roleId',
      policy: 'user',
      rateLimit: limits.write('guilds:roles'),
      body: patchRoleBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_ROLES);
        const role = requireRole(guild, ctx.params.roleId);
        if (role.id !== guildId) guild.requireBelowTop(role);
        const body = ctx.body;
        const permissions =
          body.permissions === undefined || body.permissions === null
            ? parsePermissions(role.permissions)
            : body.permissions & ALL_PERMISSIONS;
        if (body.permissions != null) checkGrant(guild, permissions);
        const [row] = await db.query<{ j: RoleRow }>(
          `UPDATE roles r SET name = $3, color = $4, permissions = $5, hoist = $6, mentionable = $7
            WHERE guild_id = $1 AND id = $2 ${RETURN_ROLE}`,
          [
            guildId,
            role.id,
            role.id === guildId ? '@everyone' : (body.name ?? role.name),
            body.color === undefined ? role.color : (body.color ?? 0),
            permissions.toString(),
            body.hoist ?? role.hoist,
            body.mentionable ?? role.mentionable,
          ],
        );
        if (!row) throw new ApiError('UNKNOWN_ROLE');
        await events.invalidate({ guildId });
        const changes = auditChanges(roleAuditFields(role), roleAuditFields(row.j), ROLE_AUDIT_KEYS);
        if (changes.length > 0)
          await audit.record({
            guildId,
            action: AUDIT_LOG_EVENTS.ROLE_UPDATE,
            userId: ctx.user.id,
            targetId: role.id,
            changes,
            reason: auditReason(ctx.request.headers),
          });
        const view = roleView(row.j);
        await events.guild('GUILD_ROLE_UPDATE', guildId, { role: view });
        // Only VIEW_CHANNEL and ADMINISTRATOR decide who sees a channel.
        const sight = PERMISSIONS.VIEW_CHANNEL | PERMISSIONS.ADMINISTRATOR;
        if ((parsePermissions(role.permissions) & sight) !== (permissions & sight))
          await events.visibility(guildId, { roles: { [role.id]: role.permissions } });
        return view;
      },
    }),

    route({
      method: 'DELETE',
      path: '/guilds/:guildId/roles/:roleId',
      policy: 'user',
      rateLimit: limits.write('guilds:roles'),
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_ROLES);
        const role = requireRole(guild, ctx.params.roleId);
        if (role.id === guildId) throw new ApiError('BAD_REQUEST', { message: 'The @everyone role cannot be deleted' });
        if (role.managed) throw new ApiError('BAD_REQUEST', { message: 'A managed role cannot be deleted' });
        guild.requireBelowTop(role);
        const { emojisChanged, holders } = await db.transaction(async (tx) => {
          const holders = await tx.query<{ user_id: string }>(
            `UPDATE members SET roles = array_remove(roles, $2::bigint) WHERE guild_id = $1 AND $2 = ANY(roles)
             RETURNING user_id::text`,
            [guildId, role.id],
          );
          const emojis = await tx.query(
            `UPDATE guild_emojis SET roles = array_remove(roles, $2::bigint)
              WHERE guild_id = $1 AND $2 = ANY(roles) RETURNING id`,
            [guildId, role.id],
          );
          await tx.query('DELETE FROM roles WHERE id = $1', [role.id]);
          return { emojisChanged: emojis.length > 0, holders: holders.map((h) => h.user_id) };
        });
        await events.invalidate({ guildId });
        await audit.record({
          guildId,
          action: AUDIT_LOG_EVENTS.ROLE_DELETE,
          userId: ctx.user.id,
          targetId: role.id,
          changes: auditChanges(roleAuditFields(role), undefined, ROLE_AUDIT_KEYS),
          reason: auditReason(ctx.request.headers),
        });
        await events.guild('GUILD_ROLE_DELETE', guildId, { role_id: role.id });
        // Its holders may lose (or, through a deny overwrite of the role, gain) channels.
        await events.visibility(guildId, { roles: { [role.id]: role.permissions }, held: { [role.id]: holders } });
        if (emojisChanged) {
          const emojis = await guildEmojis(db, guildId);
          await events.guild('GUILD_EMOJIS_UPDATE', guildId, { emojis: emojis.map((e) => emojiView(e)) });
        }
        return undefined;
      },
    }),
  ];
}
