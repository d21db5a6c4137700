import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, route } from '../../http/route.ts';
import { type ChannelAccess, pathId, requireChannel, type ThreadAccess } from './access.ts';
import { booleanQuery, type ChatDeps, limits, snowflake } from './deps.ts';
import { auditReason } from './guild-audit.ts';
import { has, PERMISSIONS } from './permissions.ts';
import { CHANNEL_TYPES } from './rows.ts';
import type { ThreadService } from './thread-service.ts';
import type { ThreadChannelRow, ThreadMemberRow } from './thread-store.ts';
import { threadMemberView, threadView } from './thread-views.ts';
import { memberView } from './views.ts';

/** Discord's four auto-archive durations, in minutes; anything else → INVALID_FORM_BODY. */
export const autoArchiveDuration = z.union([z.literal(60), z.literal(1440), z.literal(4320), z.literal(10080)]);

const threadName = z.string().trim().min(1).max(100);
const slowmode = z.number().int().min(0).max(21600);

const fromMessageBody = z.object({
  name: threadName,
  auto_archive_duration: autoArchiveDuration.optional(),
  rate_limit_per_user: slowmode.nullish(),
});

const standaloneBody = fromMessageBody.extend({
  type: z
    .union([
      z.literal(CHANNEL_TYPES.ANNOUNCEMENT_THREAD),
      z.literal(CHANNEL_TYPES.PUBLIC_THREAD),
      z.literal(CHANNEL_TYPES.PRIVATE_THREAD),
    ])
    .optional(),
  invitable: z.boolean().optional(),
});

const membersQuery = z.object({
  with_member: booleanQuery.optional(),
  after: snowflake.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(100),
});

const archivedQuery = z.object({
  before: z.string().datetime({ offset: true }).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

const joinedArchivedQuery = z.object({
  before: snowflake.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

/** The caller's view of a path `:channelId` that must be a thread; another channel type → UNKNOWN_CHANNEL. */
async function threadOf(deps: ChatDeps, ctx: Parameters<ChatDeps['access']['channelOf']>[0]) {
  const access = await deps.access.channelOf(ctx);
  if (!access.thread) throw new ApiError('UNKNOWN_CHANNEL');
  return access as ChannelAccess & { thread: ThreadAccess };
}

/** A channel threads can live in: a guild text channel. */
function requireThreadParent(access: ChannelAccess): void {
  if (access.channel.type !== CHANNEL_TYPES.GUILD_TEXT) throw new ApiError('CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
}

/**
 * Joining (PUT) or leaving (DELETE) a thread oneself: both need only sight of the thread and are refused once it is
 * archived; `change` adds or removes the caller.
 */
function ownMembershipRoute(
  deps: ChatDeps,
  method: 'PUT' | 'DELETE',
  change: (thread: ThreadChannelRow, userId: string) => Promise<unknown>,
): AnyRoute {
  return route({
    method,
    path: '/channels/:channelId/thread-members/@me',
    policy: 'user',
    rateLimit: limits.write('channels:thread-members'),
    async handler(ctx) {
      const thread = await threadOf(deps, ctx);
      if (thread.thread.row.archived) throw new ApiError('THREAD_ARCHIVED');
      await change(thread.thread.row, ctx.user.id);
      return undefined;
    },
  });
}

function listed(rows: readonly ThreadChannelRow[], members: readonly ThreadMemberRow[], limit?: number) {
  const page = limit === undefined ? rows : rows.slice(0, limit);
  const shown = new Set(page.map((r) => r.id));
  return {
    threads: page.map((r) => threadView(r)),
    members: members.filter((m) => shown.has(m.thread_id)).map((m) => threadMemberView(m)),
    ...(limit === undefined ? {} : { has_more: rows.length > limit }),
  };
}

/** Thread routes (Discord's): creation, members, listings. Messages use the channel message routes. */
export function threadRoutes(deps: ChatDeps, threads: ThreadService): AnyRoute[] {
  const { services, access, messages, store } = deps;

  return [
    route({
      method: 'POST',
      path: '/channels/:channelId/messages/:messageId/threads',
      policy: 'user',
      rateLimit: limits.create('channels:threads'),
      body: fromMessageBody,
      async handler(ctx) {
        const parent = await access.channelOf(ctx, PERMISSIONS.CREATE_PUBLIC_THREADS);
        requireThreadParent(parent);
        requireChannel(parent, PERMISSIONS.READ_MESSAGE_HISTORY);
        const starter = await messages.require(parent.channel.id, pathId(ctx.params.messageId, 'UNKNOWN_MESSAGE'));
        if (await store.channel(starter.id)) throw new ApiError('THREAD_ALREADY_CREATED_FOR_MESSAGE');
        const row = await threads.create({
          parent,
          ownerId: ctx.user.id,
          id: starter.id,
          name: ctx.body.name,
          type: CHANNEL_TYPES.PUBLIC_THREAD,
          autoArchiveDuration: ctx.body.auto_archive_duration,
          rateLimitPerUser: ctx.body.rate_limit_per_user ?? undefined,
          starter,
          reason: auditReason(ctx.request.headers),
        });
        return threads.view(row.id, ctx.user.id);
      },
    }),

    route({
      method: 'POST',
      path: '/channels/:channelId/threads',
      policy: 'user',
      rateLimit: limits.create('channels:threads'),
      body: standaloneBody,
      async handler(ctx) {
        const parent = await access.channelOf(ctx);
        requireThreadParent(parent);
        // Absent `type` makes a public thread; a private one is asked for with type 12.
        const type = ctx.body.type ?? CHANNEL_TYPES.PUBLIC_THREAD;
        if (type === CHANNEL_TYPES.ANNOUNCEMENT_THREAD) throw new ApiError('CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
        requireChannel(
          parent,
          type === CHANNEL_TYPES.PRIVATE_THREAD
            ? PERMISSIONS.CREATE_PRIVATE_THREADS
            : PERMISSIONS.CREATE_PUBLIC_THREADS,
        );
        const row = await threads.create({
          parent,
          ownerId: ctx.user.id,
          id: services.ids.next(),
          name: ctx.body.name,
          type,
          autoArchiveDuration: ctx.body.auto_archive_duration,
          rateLimitPerUser: ctx.body.rate_limit_per_user ?? undefined,
          invitable: type === CHANNEL_TYPES.PRIVATE_THREAD ? ctx.body.invitable : undefined,
          reason: auditReason(ctx.request.headers),
        });
        return threads.view(row.id, ctx.user.id);
      },
    }),

    ownMembershipRoute(deps, 'PUT', (row, userId) => threads.addMember(row, userId)),
    ownMembershipRoute(deps, 'DELETE', (row, userId) => threads.removeMember(row, userId)),

    route({
      method: 'PUT',
      path: '/channels/:channelId/thread-members/:userId',
      policy: 'user',
      rateLimit: limits.write('channels:thread-members'),
      async handler(ctx) {
        const thread = await threadOf(deps, ctx);
        const row = thread.thread.row;
        const userId = pathId(ctx.params.userId, 'UNKNOWN_USER');
        requireChannel(thread, PERMISSIONS.SEND_MESSAGES);
        if (row.archived) throw new ApiError('THREAD_ARCHIVED');
        if (row.type === CHANNEL_TYPES.PRIVATE_THREAD) {
          const canManage = has(thread.thread.parentPermissions, PERMISSIONS.MANAGE_THREADS);
          if (!thread.thread.isMember && !canManage) throw new ApiError('MISSING_PERMISSIONS');
          if (!row.invitable && !canManage && row.owner_id !== ctx.user.id) throw new ApiError('MISSING_PERMISSIONS');
        }
        await threads.requireCanJoin(row, userId);
        await threads.addMember(row, userId);
        return undefined;
      },
    }),

    route({
      method: 'DELETE',
      path: '/channels/:channelId/thread-members/:userId',
      policy: 'user',
      rateLimit: limits.write('channels:thread-members'),
      async handler(ctx) {
        const thread = await threadOf(deps, ctx);
        const row = thread.thread.row;
        const userId = pathId(ctx.params.userId, 'UNKNOWN_USER');
        const canManage = has(thread.thread.parentPermissions, PERMISSIONS.MANAGE_THREADS);
        const ownsPrivate = row.type === CHANNEL_TYPES.PRIVATE_THREAD && row.owner_id === ctx.user.id;
        if (userId !== ctx.user.id && !canManage && !ownsPrivate) throw new ApiError('MISSING_PERMISSIONS');
        if (row.archived) throw new ApiError('THREAD_ARCHIVED');
        if (!(await threads.removeMember(row, userId))) throw new ApiError('UNKNOWN_MEMBER');
        return undefined;
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/thread-members',
      policy: 'user',
      rateLimit: limits.read('channels:thread-members'),
      query: membersQuery,
      async handler(ctx) {
        const thread = await threadOf(deps, ctx);
        const rows = await threads.threads.members(thread.channel.id, {
          after: ctx.query.after,
          limit: ctx.query.limit,
        });
        return withMembers(deps, thread.thread.row.guild_id, rows, ctx.query.with_member === true);
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/thread-members/:userId',
      policy: 'user',
      rateLimit: limits.read('channels:thread-members'),
      query: membersQuery.pick({ with_member: true }),
      async handler(ctx) {
        const thread = await threadOf(deps, ctx);
        const row = await threads.threads.member(thread.channel.id, pathId(ctx.params.userId, 'UNKNOWN_MEMBER'));
        if (!row) throw new ApiError('UNKNOWN_MEMBER');
        const [view] = await withMembers(deps, thread.thread.row.guild_id, [row], ctx.query.with_member === true);
        return view;
      },
    }),

    route({
      method: 'GET',
      path: '/guilds/:guildId/threads/active',
      policy: 'user',
      rateLimit: limits.read('guilds:threads'),
      async handler(ctx) {
        const guild = await access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        const parents = new Map((await store.guildChannels(guild.guildId)).map((c) => [c.id, c]));
        const rows = await threads.threads.active(guild.guildId);
        const visible = await threads.visible(rows, ctx.user.id, (parentId) => {
          const parent = parents.get(parentId);
          return parent ? guild.channelPermissions(parent) : 0n;
        });
        return listed(visible.threads, visible.members);
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/threads/archived/public',
      policy: 'user',
      rateLimit: limits.read('channels:threads'),
      query: archivedQuery,
      async handler(ctx) {
        const parent = await access.channelOf(ctx, PERMISSIONS.READ_MESSAGE_HISTORY);
        requireThreadParent(parent);
        const rows = await threads.threads.archived(
          parent.channel.id,
          [CHANNEL_TYPES.PUBLIC_THREAD, CHANNEL_TYPES.ANNOUNCEMENT_THREAD],
          { before: ctx.query.before ? new Date(ctx.query.before) : undefined, limit: ctx.query.limit },
        );
        const members = await threads.threads.membershipsOf(
          ctx.user.id,
          rows.map((r) => r.id),
        );
        return listed(rows, members, ctx.query.limit);
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/threads/archived/private',
      policy: 'user',
      rateLimit: limits.read('channels:threads'),
      query: archivedQuery,
      async handler(ctx) {
        const parent = await access.channelOf(ctx, PERMISSIONS.READ_MESSAGE_HISTORY);
        requireThreadParent(parent);
        requireChannel(parent, PERMISSIONS.MANAGE_THREADS);
        const rows = await threads.threads.archived(parent.channel.id, [CHANNEL_TYPES.PRIVATE_THREAD], {
          before: ctx.query.before ? new Date(ctx.query.before) : undefined,
          limit: ctx.query.limit,
        });
        const members = await threads.threads.membershipsOf(
          ctx.user.id,
          rows.map((r) => r.id),
        );
        return listed(rows, members, ctx.query.limit);
      },
    }),

    route({
      method: 'GET',
      path: '/channels/:channelId/users/@me/threads/archived/private',
      policy: 'user',
      rateLimit: limits.read('channels:threads'),
      query: joinedArchivedQuery,
      async handler(ctx) {
        const parent = await access.channelOf(ctx, PERMISSIONS.READ_MESSAGE_HISTORY);
        requireThreadParent(parent);
        const rows = await threads.threads.archived(parent.channel.id, [CHANNEL_TYPES.PRIVATE_THREAD], {
          beforeId: ctx.query.before,
          limit: ctx.query.limit,
          memberId: ctx.user.id,
        });
        const members = await threads.threads.membershipsOf(
          ctx.user.id,
          rows.map((r) => r.id),
        );
        return listed(rows, members, ctx.query.limit);
      },
    }),
  ];
}

async function withMembers(deps: ChatDeps, guildId: string, rows: readonly ThreadMemberRow[], withMember: boolean) {
  if (!withMember) return rows.map((r) => threadMemberView(r));
  const users = await deps.store.usersByIds(rows.map((r) => r.user_id));
  const out: Record<string, unknown>[] = [];
  for (const row of rows) {
    const member = await deps.store.member(guildId, row.user_id);
    out.push(threadMemberView(row, member ? memberView(member, users.get(row.user_id)) : undefined));
  }
  return out;
}
