import { z } from 'zod';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import type { Queryable } from '../../platform/db/database.ts';
import { type GuildContext, isPrivateChannel, pathId, requireChannel } from './access.ts';
import { bitfield, type ChatDeps, limits, nullableText, snowflake } from './deps.ts';
import { leaveGroupDm, updateGroupDm } from './dms.ts';
import { AUDIT_LOG_EVENTS, type AuditEntryInput, auditChanges, auditReason } from './guild-audit.ts';
import { ALL_PERMISSIONS, has, PERMISSIONS } from './permissions.ts';
import { privateChannelFor } from './private-channels.ts';
import { CHANNEL_TYPES, type ChannelRow, type OverwriteJson } from './rows.ts';
import { autoArchiveDuration } from './threads.ts';
import { channelView, overwritesView } from './views.ts';

export const MAX_GUILD_CHANNELS = 500;
const MAX_OVERWRITES = 100;

const overwriteInput = z.object({
  id: snowflake,
  type: z.union([z.literal(0), z.literal(1)]),
  allow: bitfield.optional(),
  deny: bitfield.optional(),
});

const createChannelBody = z.object({
  name: z.string().trim().min(1).max(100),
  type: z
    .union([
      z.literal(CHANNEL_TYPES.GUILD_TEXT),
      z.literal(CHANNEL_TYPES.GUILD_VOICE),
      z.literal(CHANNEL_TYPES.GUILD_CATEGORY),
    ])
    .optional(),
  topic: nullableText(1024),
  parent_id: snowflake.nullish(),
  nsfw: z.boolean().optional(),
  position: z.number().int().min(0).nullish(),
  rate_limit_per_user: z.number().int().min(0).max(21600).optional(),
  bitrate: z.number().int().min(8000).max(384000).optional(),
  user_limit: z.number().int().min(0).max(99).optional(),
  permission_overwrites: z.array(overwriteInput).max(MAX_OVERWRITES).optional(),
});

const patchChannelBody = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  type: z.number().int().optional(),
  topic: nullableText(1024),
  nsfw: z.boolean().optional(),
  position: z.number().int().min(0).nullish(),
  parent_id: snowflake.nullish(),
  rate_limit_per_user: z.number().int().min(0).max(21600).optional(),
  bitrate: z.number().int().min(8000).max(384000).optional(),
  user_limit: z.number().int().min(0).max(99).optional(),
  permission_overwrites: z.array(overwriteInput).max(MAX_OVERWRITES).optional(),
  icon: z
    .string()
    .max(10 * 1024 * 1024)
    .nullish(),
  // Thread fields (thread-service.ts); ignored for other channels.
  archived: z.boolean().optional(),
  auto_archive_duration: autoArchiveDuration.optional(),
  locked: z.boolean().optional(),
  invitable: z.boolean().optional(),
});

const positionsBody = z
  .array(
    z.object({
      id: snowflake,
      position: z.number().int().min(0).nullish(),
      parent_id: snowflake.nullish(),
      lock_permissions: z.boolean().nullish(),
    }),
  )
  .min(1)
  .max(MAX_GUILD_CHANNELS);

const overwriteBody = z.object({
  type: z.union([z.literal(0), z.literal(1), z.literal('0'), z.literal('1')]).transform(Number),
  allow: bitfield.nullish(),
  deny: bitfield.nullish(),
});

type OverwriteInput = z.infer<typeof overwriteInput>;

/** A channel's fields as its audit entries show them (Discord's keys). */
function channelAuditFields(row: ChannelRow): Record<string, unknown> {
  return {
    name: row.name,
    type: row.type,
    topic: row.topic,
    nsfw: row.nsfw,
    rate_limit_per_user: row.rate_limit_per_user,
    bitrate: row.bitrate,
    user_limit: row.user_limit,
    permission_overwrites: overwritesView(row),
  };
}
const CHANNEL_CREATE_KEYS = [
  'name',
  'type',
  'topic',
  'nsfw',
  'rate_limit_per_user',
  'bitrate',
  'user_limit',
  'permission_overwrites',
] as const;
/** An update's overwrite changes are entries of their own (CHANNEL_OVERWRITE_*). */
const CHANNEL_UPDATE_KEYS = ['name', 'topic', 'nsfw', 'rate_limit_per_user', 'bitrate', 'user_limit'] as const;

/**
 * CHANNEL_OVERWRITE_CREATE / UPDATE / DELETE entries for the difference between two overwrite lists: the
 * target in `options` (`type` "0" role with its `role_name`, "1" member), allow/deny in `changes`.
 */
export function overwriteAuditEntries(
  guild: GuildContext,
  channelId: string,
  before: readonly OverwriteJson[],
  after: readonly OverwriteJson[],
  userId: string,
  reason: string | null,
): AuditEntryInput[] {
  const fields = (o: OverwriteJson) => ({
    id: o.id,
    type: Number(o.type),
    allow: (BigInt(o.allow) & ALL_PERMISSIONS).toString(),
    deny: (BigInt(o.deny) & ALL_PERMISSIONS).toString(),
  });
  const entry = (action: number, o: OverwriteJson, changes: AuditEntryInput['changes']): AuditEntryInput => {
    const type = Number(o.type);
    const roleName = type === 0 ? guild.role(o.id)?.name : undefined;
    return {
      guildId: guild.guildId,
      action,
      userId,
      targetId: channelId,
      changes,
      options: { id: o.id, type: String(type), ...(roleName !== undefined ? { role_name: roleName } : {}) },
      reason,
    };
  };
  const key = (o: OverwriteJson) => `${Number(o.type)}:${o.id}`;
  const old = new Map(before.map((o) => [key(o), o]));
  const now = new Map(after.map((o) => [key(o), o]));
  const out: AuditEntryInput[] = [];
  for (const [k, o] of now) {
    const previous = old.get(k);
    if (!previous) {
      out.push(
        entry(
          AUDIT_LOG_EVENTS.CHANNEL_OVERWRITE_CREATE,
          o,
          auditChanges(undefined, fields(o), ['id', 'type', 'allow', 'deny']),
        ),
      );
      continue;
    }
    const changes = auditChanges(fields(previous), fields(o), ['allow', 'deny']);
    if (changes.length > 0) out.push(entry(AUDIT_LOG_EVENTS.CHANNEL_OVERWRITE_UPDATE, o, changes));
  }
  for (const [k, o] of old)
    if (!now.has(k))
      out.push(
        entry(
          AUDIT_LOG_EVENTS.CHANNEL_OVERWRITE_DELETE,
          o,
          auditChanges(fields(o), undefined, ['id', 'type', 'allow', 'deny']),
        ),
      );
  return out;
}

/**
 * Checks overwrites before they are stored: targets exist, and a caller without ADMINISTRATOR only grants or
 * denies bits they hold themselves (so MANAGE_ROLES cannot be used to escalate).
 */
async function checkOverwrites(
  db: Queryable,
  guild: GuildContext,
  overwrites: readonly OverwriteInput[],
  callerPermissions: bigint,
): Promise<OverwriteJson[]> {
  const out: OverwriteJson[] = [];
  const userIds = overwrites.filter((o) => o.type === 1).map((o) => o.id);
  const existingUsers = userIds.length
    ? new Set(
        (await db.query<{ id: string }>('SELECT id FROM users WHERE id = ANY($1::bigint[])', [userIds])).map(
          (r) => r.id,
        ),
      )
    : new Set<string>();
  for (const o of overwrites) {
    if (o.type === 0 && !guild.role(o.id)) throw new ApiError('UNKNOWN_ROLE');
    if (o.type === 1 && !existingUsers.has(o.id)) throw new ApiError('UNKNOWN_USER');
    const allow = (o.allow ?? 0n) & ALL_PERMISSIONS;
    const deny = (o.deny ?? 0n) & ALL_PERMISSIONS & ~allow;
    if (!guild.can(PERMISSIONS.ADMINISTRATOR) && ((allow | deny) & ~callerPermissions) !== 0n)
      throw new ApiError('MISSING_PERMISSIONS');
    out.push({ id: o.id, type: o.type, allow: allow.toString(), deny: deny.toString() });
  }
  return out;
}

export function channelRoutes(deps: ChatDeps): AnyRoute[] {
  const { services, store, access, events, audit } = deps;
  const { db, ids } = services;
  const threads = services.chatCore.threads;

  async function requireParent(guildId: string, parentId: string | null | undefined): Promise<ChannelRow | undefined> {
    if (!parentId) return undefined;
    const parent = await store.channel(parentId);
    if (!parent || parent.guild_id !== guildId || parent.type !== CHANNEL_TYPES.GUILD_CATEGORY)
      throw fieldError('parent_id', 'INVALID_FORMAT', 'Not a category of this guild');
    return parent;
  }

  /**
   * What follows a change to one channel's overwrites (putting or deleting one): caches dropped, the audit entries,
   * CHANNEL_DELETE/CREATE for members who lost or gained the channel, CHANNEL_UPDATE, and its threads re-checked.
   */
  async function publishOverwriteChange(
    guild: GuildContext,
    { before, row }: { before: OverwriteJson[]; row: ChannelRow },
    userId: string,
    reason: string | null,
  ): Promise<void> {
    await events.invalidate({ guildId: guild.guildId });
    for (const entry of overwriteAuditEntries(guild, row.id, before, row.permission_overwrites, userId, reason))
      await audit.record(entry);
    await events.visibility(guild.guildId, { overwrites: { [row.id]: before } });
    await events.channelViewers('CHANNEL_UPDATE', guild.guildId, row.id, channelView(row));
    await threads.syncChannel(guild.guildId, row.id);
  }

  return [
    route({
      method: 'GET',
      path: '/guilds/:guildId/channels',
      policy: 'user',
      rateLimit: limits.read('guilds:channels'),
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        const channels = await store.guildChannels(guild.guildId);
        return channels.filter((c) => has(guild.channelPermissions(c), PERMISSIONS.VIEW_CHANNEL)).map(channelView);
      },
    }),

    route({
      method: 'POST',
      path: '/guilds/:guildId/channels',
      policy: 'user',
      rateLimit: limits.create('guilds:channels'),
      body: createChannelBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guild = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_CHANNELS);
        const body = ctx.body;
        const type = body.type ?? CHANNEL_TYPES.GUILD_TEXT;
        const parent = type === CHANNEL_TYPES.GUILD_CATEGORY ? undefined : await requireParent(guildId, body.parent_id);
        if (body.permission_overwrites?.length) guild.require(PERMISSIONS.MANAGE_ROLES);
        const overwrites = body.permission_overwrites
          ? await checkOverwrites(db, guild, body.permission_overwrites, guild.permissions)
          : (parent?.permission_overwrites ?? []);
        const id = ids.next();
        const row = await db.transaction(async (tx) => {
          const [count] = await tx.query<{ n: number }>(
            // Threads do not count against the guild's channel limit (Discord's rule).
            'SELECT count(*)::int AS n FROM channels WHERE guild_id = $1 AND type NOT IN (10, 11, 12)',
            [guildId],
          );
          if ((count?.n ?? 0) >= MAX_GUILD_CHANNELS) throw new ApiError('MAX_GUILD_CHANNELS');
          const [inserted] = await tx.query<ChannelRow>(
            `INSERT INTO channels (id, type, guild_id, name, topic, position, parent_id, nsfw, rate_limit_per_user, bitrate,
                                   user_limit, permission_overwrites)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb) RETURNING *`,
            [
              id,
              type,
              guildId,
              body.name,
              type === CHANNEL_TYPES.GUILD_TEXT ? (body.topic ?? null) : null,
              body.position ?? count?.n ?? 0,
              parent?.id ?? null,
              body.nsfw ?? false,
              type === CHANNEL_TYPES.GUILD_CATEGORY ? 0 : (body.rate_limit_per_user ?? 0),
              type === CHANNEL_TYPES.GUILD_VOICE ? (body.bitrate ?? 64000) : null,
              type === CHANNEL_TYPES.GUILD_VOICE ? (body.user_limit ?? 0) : null,
              JSON.stringify(overwrites),
            ],
          );
          return inserted as ChannelRow;
        });
        await events.invalidate({ guildId });
        await audit.record({
          guildId,
          action: AUDIT_LOG_EVENTS.CHANNEL_CREATE,
          userId: ctx.user.id,
          targetId: row.id,
          changes: auditChanges(undefined, channelAuditFields(row), CHANNEL_CREATE_KEYS),
          reason: auditReason(ctx.request.headers),
        });
        const view = channelView(row);
        await events.channelViewers('CHANNEL_CREATE', guildId, row.id, view);
        return view;
      },
    }),

    route({
      method: 'PATCH',
      path: '/guilds/:guildId/channels',
      policy: 'user',
      rateLimit: limits.write('guilds:channels'),
      body: positionsBody,
      async handler(ctx) {
        const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
        const guildAccess = await access.guildWith(guildId, ctx.user.id, ctx.now, PERMISSIONS.MANAGE_CHANNELS);
        const channels = new Map((await store.guildChannels(guildId)).map((c) => [c.id, c]));
        // Moving a channel, or moving one into a category, needs sight of both: what the mover cannot see stays
        // where it is (403), as on the platform's own servers.
        const sees = (channel: ChannelRow) => has(guildAccess.channelPermissions(channel), PERMISSIONS.VIEW_CHANNEL);
        for (const entry of ctx.body) {
          const channel = channels.get(entry.id);
          if (!channel) throw new ApiError('UNKNOWN_CHANNEL');
          if (!sees(channel)) throw new ApiError('MISSING_PERMISSIONS');
          if (entry.parent_id) {
            const parent = channels.get(entry.parent_id);
            if (!parent || parent.type !== CHANNEL_TYPES.GUILD_CATEGORY)
              throw fieldError('parent_id', 'INVALID_FORMAT', 'Not a category of this guild');
            if (!sees(parent)) throw new ApiError('MISSING_PERMISSIONS');
          }
        }
        const changed = await db.transaction(async (tx) => {
          const out: ChannelRow[] = [];
          for (const entry of ctx.body) {
            const current = channels.get(entry.id) as ChannelRow;
            const parentId =
              entry.parent_id === undefined || current.type === CHANNEL_TYPES.GUILD_CATEGORY
                ? current.parent_id
                : entry.parent_id;
            const parent = parentId ? channels.get(parentId) : undefined;
            const overwrites =
              entry.lock_permissions && parent ? parent.permission_overwrites : current.permission_overwrites;
            const [row] = await tx.query<ChannelRow>(
              'UPDATE channels SET position = $2, parent_id = $3, permission_overwrites = $4::jsonb WHERE id = $1 RETURNING *',
              [entry.id, entry.position ?? current.position, parentId, JSON.stringify(overwrites)],
            );
            if (row) out.push(row);
          }
          return out;
        });
        await events.invalidate({ guildId });
        await events.visibility(guildId, { overwrites: overwritesBefore(channels, changed) });
        for (const row of changed) await events.channelViewers('CHANNEL_UPDATE', guildId, row.id, channelView(row));
        return undefined;
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId',
      policy: 'user',
      rateLimit: limits.read('channels'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        if (isPrivateChannel(channelAccess.channel))
          return privateChannelFor(store, channelAccess.channel, channelAccess.recipients ?? [], ctx.user.id);
        if (channelAccess.thread) return threads.view(channelAccess.channel.id, ctx.user.id);
        return channelView(channelAccess.channel);
      },
    }),

    route({
      method: 'PATCH',
      path: '/channels/:channelId',
      policy: 'user',
      rateLimit: limits.write('channels'),
      body: patchChannelBody,
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const { channel } = channelAccess;
        const body = ctx.body;
        if (isPrivateChannel(channel)) {
          if (channel.type !== CHANNEL_TYPES.GROUP_DM) throw new ApiError('MISSING_PERMISSIONS');
          return updateGroupDm(deps, channel, channelAccess.recipients ?? [], body, ctx.user.id);
        }
        const reason = auditReason(ctx.request.headers);
        if (channelAccess.thread) return threads.update(channelAccess, ctx.user.id, body, reason);
        const guild = channelAccess.guild as GuildContext;
        requireChannel(channelAccess, PERMISSIONS.MANAGE_CHANNELS);
        let overwrites = channel.permission_overwrites;
        if (body.permission_overwrites !== undefined) {
          requireChannel(channelAccess, PERMISSIONS.MANAGE_ROLES);
          overwrites = await checkOverwrites(db, guild, body.permission_overwrites, channelAccess.permissions);
        }
        const parent =
          body.parent_id === undefined || channel.type === CHANNEL_TYPES.GUILD_CATEGORY
            ? undefined
            : await requireParent(guild.guildId, body.parent_id);
        const isText = channel.type === CHANNEL_TYPES.GUILD_TEXT;
        const [row] = await db.query<ChannelRow>(
          `UPDATE channels SET name = $2, topic = $3, nsfw = $4, position = $5, parent_id = $6, rate_limit_per_user = $7,
                  bitrate = $8, user_limit = $9, permission_overwrites = $10::jsonb
            WHERE id = $1 RETURNING *`,
          [
            channel.id,
            body.name ?? channel.name,
            isText && body.topic !== undefined ? body.topic : channel.topic,
            body.nsfw ?? channel.nsfw,
            body.position ?? channel.position,
            body.parent_id === undefined || channel.type === CHANNEL_TYPES.GUILD_CATEGORY
              ? channel.parent_id
              : (parent?.id ?? null),
            channel.type === CHANNEL_TYPES.GUILD_CATEGORY
              ? 0
              : (body.rate_limit_per_user ?? channel.rate_limit_per_user),
            channel.type === CHANNEL_TYPES.GUILD_VOICE ? (body.bitrate ?? channel.bitrate) : channel.bitrate,
            channel.type === CHANNEL_TYPES.GUILD_VOICE ? (body.user_limit ?? channel.user_limit) : channel.user_limit,
            JSON.stringify(overwrites),
          ],
        );
        if (!row) throw new ApiError('UNKNOWN_CHANNEL');
        await events.invalidate({ guildId: guild.guildId });
        const changes = auditChanges(channelAuditFields(channel), channelAuditFields(row), CHANNEL_UPDATE_KEYS);
        if (changes.length > 0)
          await audit.record({
            guildId: guild.guildId,
            action: AUDIT_LOG_EVENTS.CHANNEL_UPDATE,
            userId: ctx.user.id,
            targetId: row.id,
            changes,
            reason,
          });
        for (const entry of overwriteAuditEntries(
          guild,
          row.id,
          channel.permission_overwrites,
          row.permission_overwrites,
          ctx.user.id,
          reason,
        ))
          await audit.record(entry);
        const view = channelView(row);
        // Members who lost the channel get CHANNEL_DELETE, those who gained it CHANNEL_CREATE (then the update).
        await events.visibility(guild.guildId, {
          overwrites: overwritesBefore(new Map([[channel.id, channel]]), [row]),
        });
        await events.channelViewers('CHANNEL_UPDATE', guild.guildId, row.id, view);
        if (body.permission_overwrites !== undefined) await threads.syncChannel(guild.guildId, row.id);
        return view;
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId',
      policy: 'user',
      rateLimit: limits.write('channels'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const { channel } = channelAccess;
        if (channel.type === CHANNEL_TYPES.GROUP_DM) {
          await leaveGroupDm(deps, channel, channelAccess.recipients ?? [], ctx.user.id);
          return undefined;
        }
        if (channel.type === CHANNEL_TYPES.DM) {
          // Closing a 1:1 DM only hides it for the caller's clients; the conversation stays.
          await events.users('CHANNEL_DELETE', [ctx.user.id], { id: channel.id, type: channel.type });
          return undefined;
        }
        if (channelAccess.thread) {
          await threads.remove(channelAccess, ctx.user.id, auditReason(ctx.request.headers));
          return undefined;
        }
        requireChannel(channelAccess, PERMISSIONS.MANAGE_CHANNELS);
        const guildId = channel.guild_id as string;
        await db.transaction(async (tx) => {
          // A channel's threads go with it (clients drop them on CHANNEL_DELETE, as Discord's do).
          await tx.query('DELETE FROM channels WHERE guild_id = $1 AND parent_id = $2 AND type IN (10, 11, 12)', [
            guildId,
            channel.id,
          ]);
          await tx.query('UPDATE channels SET parent_id = NULL WHERE guild_id = $1 AND parent_id = $2', [
            guildId,
            channel.id,
          ]);
          await tx.query(
            `UPDATE guilds SET system_channel_id = CASE WHEN system_channel_id = $2 THEN NULL ELSE system_channel_id END,
                               rules_channel_id = CASE WHEN rules_channel_id = $2 THEN NULL ELSE rules_channel_id END,
                               afk_channel_id = CASE WHEN afk_channel_id = $2 THEN NULL ELSE afk_channel_id END
              WHERE id = $1`,
            [guildId, channel.id],
          );
          await tx.query('DELETE FROM channels WHERE id = $1', [channel.id]);
        });
        await events.invalidate({ guildId });
        await audit.record({
          guildId,
          action: AUDIT_LOG_EVENTS.CHANNEL_DELETE,
          userId: ctx.user.id,
          targetId: channel.id,
          changes: auditChanges(channelAuditFields(channel), undefined, CHANNEL_CREATE_KEYS),
          reason: auditReason(ctx.request.headers),
        });
        await events.guild('CHANNEL_DELETE', guildId, channelView(channel));
        return undefined;
      },
    }),

    route({
      method: 'PUT',
      path: '/channels/:channelId/permissions/:overwriteId',
      policy: 'user',
      rateLimit: limits.write('channels:permissions'),
      body: overwriteBody,
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const guild = channelAccess.guild;
        if (!guild) throw new ApiError('MISSING_PERMISSIONS');
        requireChannel(channelAccess, PERMISSIONS.MANAGE_ROLES);
        const targetId = pathId(ctx.params.overwriteId, ctx.body.type === 0 ? 'UNKNOWN_ROLE' : 'UNKNOWN_USER');
        const [overwrite] = await checkOverwrites(
          db,
          guild,
          [{ id: targetId, type: ctx.body.type as 0 | 1, allow: ctx.body.allow ?? 0n, deny: ctx.body.deny ?? 0n }],
          channelAccess.permissions,
        );
        const replaced = await replaceOverwrites(db, channelAccess.channel.id, (list) => [
          ...list.filter((o) => o.id !== targetId),
          overwrite as OverwriteJson,
        ]);
        await publishOverwriteChange(guild, replaced, ctx.user.id, auditReason(ctx.request.headers));
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/permissions/:overwriteId',
      policy: 'user',
      rateLimit: limits.write('channels:permissions'),
      async handler(ctx) {
        const channelAccess = await access.channelOf(ctx);
        const guild = channelAccess.guild;
        if (!guild) throw new ApiError('MISSING_PERMISSIONS');
        requireChannel(channelAccess, PERMISSIONS.MANAGE_ROLES);
        const targetId = pathId(ctx.params.overwriteId, 'UNKNOWN_ROLE');
        const replaced = await replaceOverwrites(db, channelAccess.channel.id, (list) =>
          list.filter((o) => o.id !== targetId),
        );
        await publishOverwriteChange(guild, replaced, ctx.user.id, auditReason(ctx.request.headers));
        return undefined;
      },
    }),
  ];
}

/** The overwrites before of those `changed` rows whose overwrites changed (for `events.visibility`). */
function overwritesBefore(
  previous: ReadonlyMap<string, ChannelRow>,
  changed: readonly ChannelRow[],
): Record<string, OverwriteJson[]> {
  const out: Record<string, OverwriteJson[]> = {};
  for (const row of changed) {
    const old = previous.get(row.id);
    if (old && JSON.stringify(old.permission_overwrites) !== JSON.stringify(row.permission_overwrites))
      out[row.id] = old.permission_overwrites;
  }
  return out;
}

/** Read-modify-write of a channel's overwrites under a row lock, so concurrent edits do not lose each other. */
async function replaceOverwrites(
  db: { transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> },
  channelId: string,
  change: (list: OverwriteJson[]) => OverwriteJson[],
): Promise<{ before: OverwriteJson[]; row: ChannelRow }> {
  return db.transaction(async (tx) => {
    const [current] = await tx.query<ChannelRow>('SELECT * FROM channels WHERE id = $1 FOR UPDATE', [channelId]);
    if (!current) throw new ApiError('UNKNOWN_CHANNEL');
    const [row] = await tx.query<ChannelRow>(
      'UPDATE channels SET permission_overwrites = $2::jsonb WHERE id = $1 RETURNING *',
      [channelId, JSON.stringify(change(current.permission_overwrites))],
    );
    return { before: current.permission_overwrites, row: row as ChannelRow };
  });
}
