import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import type { Audience } from '../events/dispatch.ts';
import { type Access, type ChannelAccess, subjectFor, type ThreadAccess, toOverwrites } from './access.ts';
import type { ChatEvents } from './events.ts';
import { AUDIT_LOG_EVENTS, type AuditRecorder, auditChanges } from './guild-audit.ts';
import { HAS_THREAD_FLAG, MESSAGE_TYPES, type MessageService, type ThreadHooks } from './message-service.ts';
import { computeChannelPermissions, has, PERMISSIONS, parsePermissions } from './permissions.ts';
import { CHANNEL_TYPES, type ChannelRow, type MessageRow } from './rows.ts';
import type { ChatStore } from './store.ts';
import type { ThreadChannelRow, ThreadMemberRow, ThreadStore } from './thread-store.ts';
import { type ThreadView, threadMemberView, threadView } from './thread-views.ts';
import { memberView } from './views.ts';

export interface CreateThreadInput {
  parent: ChannelAccess;
  ownerId: string;
  name: string;
  type: number;
  autoArchiveDuration?: number | undefined;
  rateLimitPerUser?: number | undefined;
  invitable?: boolean | undefined;
  /** The message the thread starts from (public threads only); the thread takes its id. */
  starter?: MessageRow | undefined;
  id: string;
  /** `X-Audit-Log-Reason` of the request, for the THREAD_CREATE audit entry. */
  reason?: string | null | undefined;
}

export interface UpdateThreadInput {
  name?: string | undefined;
  archived?: boolean | undefined;
  auto_archive_duration?: number | undefined;
  locked?: boolean | undefined;
  invitable?: boolean | undefined;
  rate_limit_per_user?: number | undefined;
}

/** The viewer's permissions in a parent channel, for deciding which threads they see. */
export type ParentPermissions = (parentId: string) => bigint;

/**
 * The threads among `rows` a viewer sees (parent visible; private ones only as a member or MANAGE_THREADS
 * holder), with the viewer's thread member rows for them.
 */
export async function visibleThreads(
  store: ThreadStore,
  rows: readonly ThreadChannelRow[],
  viewerId: string,
  parentPermissions: ParentPermissions,
): Promise<{ threads: ThreadChannelRow[]; members: ThreadMemberRow[] }> {
  const memberships = await store.membershipsOf(
    viewerId,
    rows.map((r) => r.id),
  );
  const joined = new Set(memberships.map((m) => m.thread_id));
  const threads = rows.filter((row) => {
    const permissions = parentPermissions(row.parent_id);
    if (!has(permissions, PERMISSIONS.VIEW_CHANNEL)) return false;
    if (row.type !== CHANNEL_TYPES.PRIVATE_THREAD) return true;
    return joined.has(row.id) || has(permissions, PERMISSIONS.MANAGE_THREADS);
  });
  const shown = new Set(threads.map((t) => t.id));
  return { threads, members: memberships.filter((m) => shown.has(m.thread_id)) };
}

/**
 * Threads (Discord's model): creation, membership, archive and lock, auto-archive, and who sees them. A public
 * thread's events reach whoever sees its parent; a private thread's only its members and MANAGE_THREADS holders.
 */
export class ThreadService implements ThreadHooks {
  constructor(
    private readonly store: ChatStore,
    readonly threads: ThreadStore,
    private readonly access: Access,
    private readonly events: ChatEvents,
    private readonly messages: MessageService,
    private readonly clock: Clock,
    private readonly audit: AuditRecorder,
  ) {
    events.setThreadAudience((thread) => this.audience(thread));
    messages.setThreadHooks(this);
  }

  async audience(thread: ChannelRow): Promise<Audience> {
    const guildId = thread.guild_id as string;
    if (thread.type !== CHANNEL_TYPES.PRIVATE_THREAD)
      return { kind: 'channel', guildId, channelId: thread.parent_id as string };
    return { kind: 'users', userIds: await this.privateViewers(thread) };
  }

  /**
   * Members of a private thread who still see its parent, and everyone holding MANAGE_THREADS there. Only
   * members who could qualify are read: the thread's members, the owner, and holders of a role or member
   * overwrite that can grant MANAGE_THREADS (all members when @everyone can).
   */
  async privateViewers(thread: ChannelRow): Promise<string[]> {
    const guildId = thread.guild_id as string;
    const [guild, roles, parent, threadMembers] = await Promise.all([
      this.store.guild(guildId),
      this.store.roles(guildId),
      this.store.channel(thread.parent_id as string),
      this.threads.memberIds(thread.id),
    ]);
    if (!guild || !parent) return [];
    const overwrites = toOverwrites(parent);
    const grants = (bits: bigint) => (bits & (PERMISSIONS.MANAGE_THREADS | PERMISSIONS.ADMINISTRATOR)) !== 0n;
    const allows = (id: string, type: number) =>
      overwrites.some((o) => o.id === id && o.type === type && has(o.allow, PERMISSIONS.MANAGE_THREADS));
    const everyone = roles.find((r) => r.id === guildId);
    const anyone = grants(parsePermissions(everyone?.permissions)) || allows(guildId, 0);
    const roleIds = roles.filter((r) => grants(parsePermissions(r.permissions)) || allows(r.id, 0)).map((r) => r.id);
    const userIds = [
      ...threadMembers,
      guild.owner_id,
      ...overwrites.filter((o) => o.type === 1 && has(o.allow, PERMISSIONS.MANAGE_THREADS)).map((o) => o.id),
    ];
    const members = anyone
      ? await this.threads.guildMembers(guildId)
      : await this.threads.guildMembers(guildId, { userIds, roleIds });
    const joined = new Set(threadMembers);
    const now = this.clock.now();
    return members
      .filter((member) => {
        const permissions = computeChannelPermissions(subjectFor(guild, roles, member, now), overwrites);
        if (!has(permissions, PERMISSIONS.VIEW_CHANNEL)) return false;
        return joined.has(member.user_id) || has(permissions, PERMISSIONS.MANAGE_THREADS);
      })
      .map((m) => m.user_id);
  }

  /** Every guild member who sees a channel, with their permissions in it. */
  private async parentViewers(guildId: string, parentId: string): Promise<Map<string, bigint>> {
    const [guild, roles, parent, members] = await Promise.all([
      this.store.guild(guildId),
      this.store.roles(guildId),
      this.store.channel(parentId),
      this.threads.guildMembers(guildId),
    ]);
    const out = new Map<string, bigint>();
    if (!guild || !parent) return out;
    const overwrites = toOverwrites(parent);
    const now = this.clock.now();
    for (const member of members) {
      const permissions = computeChannelPermissions(subjectFor(guild, roles, member, now), overwrites);
      if (has(permissions, PERMISSIONS.VIEW_CHANNEL)) out.set(member.user_id, permissions);
    }
    return out;
  }

  /**
   * THREAD_LIST_SYNC after a channel's permissions changed (someone may have gained access to it): each
   * viewer of the channel gets the channel's active threads they see and their memberships in them.
   */
  async syncChannel(guildId: string, parentId: string): Promise<void> {
    const rows = (await this.threads.active(guildId)).filter((row) => row.parent_id === parentId);
    if (rows.length === 0) return;
    const viewers = await this.parentViewers(guildId, parentId);
    for (const [userId, permissions] of viewers) {
      const { threads, members } = await this.visible(rows, userId, () => permissions);
      await this.events.users('THREAD_LIST_SYNC', [userId], {
        guild_id: guildId,
        channel_ids: [parentId],
        threads: threads.map((row) => threadView(row)),
        members: members.map((m) => threadMemberView(m)),
      });
    }
  }

  /**
   * THREAD_LIST_SYNC of the whole guild (no `channel_ids`) to one member whose roles changed: the active
   * threads they see now, with their memberships.
   */
  async syncMember(guildId: string, userId: string): Promise<void> {
    const rows = await this.threads.active(guildId);
    if (rows.length === 0) return;
    const guild = await this.access.guild(guildId, userId, this.clock.now()).catch(() => undefined);
    if (!guild) return;
    const parents = new Map((await this.store.guildChannels(guildId)).map((c) => [c.id, c]));
    const { threads, members } = await this.visible(rows, userId, (parentId) => {
      const parent = parents.get(parentId);
      return parent ? guild.channelPermissions(parent) : 0n;
    });
    await this.events.users('THREAD_LIST_SYNC', [userId], {
      guild_id: guildId,
      threads: threads.map((row) => threadView(row)),
      members: members.map((m) => threadMemberView(m)),
    });
  }

  async view(threadId: string, viewerId?: string): Promise<ThreadView> {
    const [row, member] = await Promise.all([
      this.threads.find(threadId),
      viewerId ? this.threads.member(threadId, viewerId) : Promise.resolve(undefined),
    ]);
    if (!row) throw new ApiError('UNKNOWN_CHANNEL');
    return threadView(row, member);
  }

  /** Threads the viewer sees among `rows`, with the viewer's thread member rows. */
  visible(rows: readonly ThreadChannelRow[], viewerId: string, parentPermissions: ParentPermissions) {
    return visibleThreads(this.threads, rows, viewerId, parentPermissions);
  }

  async create(input: CreateThreadInput): Promise<ThreadChannelRow> {
    const parent = input.parent.channel;
    const guildId = parent.guild_id as string;
    const at = new Date(this.clock.now());
    try {
      await this.threads.insert(
        {
          id: input.id,
          type: input.type,
          guildId,
          parentId: parent.id,
          name: input.name,
          ownerId: input.ownerId,
          nsfw: parent.nsfw,
          rateLimitPerUser: input.rateLimitPerUser ?? 0,
          autoArchiveDuration: input.autoArchiveDuration ?? 1440,
          invitable: input.invitable ?? true,
          starterFlag: input.starter ? HAS_THREAD_FLAG : undefined,
        },
        at,
      );
    } catch (error) {
      if (input.starter && isUniqueViolation(error)) throw new ApiError('THREAD_ALREADY_CREATED_FOR_MESSAGE');
      throw error;
    }
    const row = (await this.threads.find(input.id)) as ThreadChannelRow;
    await this.audit.record({
      guildId,
      action: AUDIT_LOG_EVENTS.THREAD_CREATE,
      userId: input.ownerId,
      targetId: row.id,
      changes: auditChanges(undefined, threadAuditFields(row), THREAD_AUDIT_KEYS),
      reason: input.reason,
    });
    await this.events.thread('THREAD_CREATE', row, { ...threadView(row), newly_created: true });
    if (!input.starter && row.type !== CHANNEL_TYPES.PRIVATE_THREAD) {
      // Discord's "started a thread" notice in the parent: type 18, the thread's name, a reference to it.
      const author = await this.store.user(input.ownerId);
      await this.messages.create({
        channel: parent,
        author: author ?? null,
        content: row.name,
        type: MESSAGE_TYPES.THREAD_CREATED,
        channelReference: row.id,
        allowedMentions: { parse: [] },
        canMentionEveryone: false,
        authorMember: input.parent.guild?.member,
      });
    }
    if (input.starter) {
      const starter = await this.messages.find(parent.id, input.starter.id);
      if (starter) {
        const [message] = await this.messages.render([starter], undefined);
        if (message) await this.events.channel('MESSAGE_UPDATE', { channel: parent, recipients: undefined }, message);
      }
    }
    return row;
  }

  /**
   * Adds a member; newly added → THREAD_MEMBER_UPDATE to them, THREAD_MEMBERS_UPDATE to the thread's viewers,
   * and for a private thread THREAD_CREATE to them (they could not see it before).
   */
  async addMember(thread: ThreadChannelRow, userId: string): Promise<boolean> {
    const added = await this.threads.addMember(thread.id, userId, new Date(this.clock.now()));
    if (!added) return false;
    const guildId = thread.guild_id;
    const row = (await this.threads.find(thread.id)) ?? thread;
    if (row.type === CHANNEL_TYPES.PRIVATE_THREAD)
      await this.events.users('THREAD_CREATE', [userId], threadView(row, added));
    await this.events.users('THREAD_MEMBER_UPDATE', [userId], { ...threadMemberView(added), guild_id: guildId });
    const [guildMember, users] = await Promise.all([
      this.store.member(guildId, userId),
      this.store.usersByIds([userId]),
    ]);
    const member = guildMember ? memberView(guildMember, users.get(userId)) : undefined;
    await this.events.thread('THREAD_MEMBERS_UPDATE', row, {
      id: row.id,
      guild_id: guildId,
      member_count: row.member_count,
      added_members: [{ ...threadMemberView(added, member), presence: null }],
    });
    return true;
  }

  async removeMember(thread: ThreadChannelRow, userId: string): Promise<boolean> {
    // The leaver still gets the update: compute the audience before they leave a private thread.
    const audience = await this.audience(thread);
    const removed = await this.threads.removeMember(thread.id, userId);
    if (!removed) return false;
    const row = (await this.threads.find(thread.id)) ?? thread;
    const payload = {
      id: row.id,
      guild_id: row.guild_id,
      member_count: row.member_count,
      removed_member_ids: [userId],
    };
    if (audience.kind === 'users') await this.events.users('THREAD_MEMBERS_UPDATE', audience.userIds, payload);
    else await this.events.thread('THREAD_MEMBERS_UPDATE', row, payload);
    return true;
  }

  /** Whether `userId` (a guild member) may see the thread's parent; not a member → UNKNOWN_MEMBER. */
  async requireCanJoin(thread: ThreadChannelRow, userId: string): Promise<void> {
    const target = await this.access.channel(thread.parent_id, userId, this.clock.now()).catch((error: unknown) => {
      if (error instanceof ApiError && error.code === 'MISSING_ACCESS') {
        return undefined;
      }
      throw error;
    });
    if (target === undefined) {
      const member = await this.store.member(thread.guild_id, userId);
      throw new ApiError(member ? 'MISSING_PERMISSIONS' : 'UNKNOWN_MEMBER');
    }
  }

  async update(
    access: ChannelAccess,
    userId: string,
    body: UpdateThreadInput,
    reason: string | null = null,
  ): Promise<ThreadView> {
    const thread = access.thread as ThreadAccess;
    const row = thread.row;
    const canManage = has(thread.parentPermissions, PERMISSIONS.MANAGE_THREADS);
    const isOwner = row.owner_id === userId;
    if ((body.locked !== undefined || body.rate_limit_per_user !== undefined) && !canManage)
      throw new ApiError('MISSING_PERMISSIONS');
    if (
      (body.name !== undefined || body.auto_archive_duration !== undefined || body.archived === true) &&
      !canManage &&
      !isOwner
    )
      throw new ApiError('MISSING_PERMISSIONS');
    if (body.invitable !== undefined) {
      if (row.type !== CHANNEL_TYPES.PRIVATE_THREAD) throw new ApiError('CANNOT_EXECUTE_ACTION_ON_CHANNEL_TYPE');
      if (!canManage && !isOwner) throw new ApiError('MISSING_PERMISSIONS');
    }
    const locked = body.locked ?? row.locked;
    const unarchiving = row.archived && body.archived === false;
    if (unarchiving) {
      if (locked && !canManage) throw new ApiError('THREAD_LOCKED');
      if (!has(thread.parentPermissions, PERMISSIONS.SEND_MESSAGES_IN_THREADS) && !canManage)
        throw new ApiError('MISSING_PERMISSIONS');
    }
    // An archived thread changes only by being unarchived (a moderator may also lock or unlock it).
    const onlyArchiveFields = Object.entries(body).every(
      ([key, value]) => value === undefined || key === 'archived' || key === 'locked',
    );
    if (row.archived && !unarchiving && !onlyArchiveFields) throw new ApiError('THREAD_ARCHIVED');
    const archived = body.archived ?? row.archived;
    const now = new Date(this.clock.now());
    await this.threads.update(
      row.id,
      {
        name: body.name ?? (row.name as string),
        rateLimitPerUser: body.rate_limit_per_user ?? row.rate_limit_per_user,
        archived,
        autoArchiveDuration: body.auto_archive_duration ?? row.auto_archive_duration,
        locked,
        invitable: body.invitable ?? row.invitable,
      },
      archived !== row.archived ? now : undefined,
    );
    const updated = (await this.threads.find(row.id)) as ThreadChannelRow;
    const changes = auditChanges(threadAuditFields(row), threadAuditFields(updated), THREAD_AUDIT_KEYS);
    if (changes.length > 0)
      await this.audit.record({
        guildId: row.guild_id,
        action: AUDIT_LOG_EVENTS.THREAD_UPDATE,
        userId,
        targetId: row.id,
        changes,
        reason,
      });
    await this.events.thread('THREAD_UPDATE', updated, threadView(updated));
    const member = await this.threads.member(row.id, userId);
    return threadView(updated, member);
  }

  async remove(access: ChannelAccess, userId: string, reason: string | null = null): Promise<ThreadView> {
    const thread = access.thread as ThreadAccess;
    if (!has(thread.parentPermissions, PERMISSIONS.MANAGE_THREADS)) throw new ApiError('MISSING_PERMISSIONS');
    const row = thread.row;
    const audience = await this.audience(row);
    await this.threads.delete(row.id, HAS_THREAD_FLAG);
    await this.audit.record({
      guildId: row.guild_id,
      action: AUDIT_LOG_EVENTS.THREAD_DELETE,
      userId,
      targetId: row.id,
      changes: auditChanges(threadAuditFields(row), undefined, THREAD_AUDIT_KEYS),
      reason,
    });
    const payload = { id: row.id, guild_id: row.guild_id, parent_id: row.parent_id, type: row.type };
    if (audience.kind === 'users') await this.events.users('THREAD_DELETE', audience.userIds, payload);
    else await this.events.thread('THREAD_DELETE', row, payload);
    return threadView(row);
  }

  // ThreadHooks: what messages do to their thread.

  async beforeMessage(channel: ChannelRow, authorId: string | null): Promise<void> {
    // The message routes pass the thread row `Access` read; webhooks pass a plain channel row.
    const row = isThreadRow(channel) ? channel : await this.threads.find(channel.id);
    if (!row) throw new ApiError('UNKNOWN_CHANNEL');
    if (row.locked && authorId !== null) {
      const author = await this.access.channel(row.parent_id, authorId, this.clock.now());
      if (!has(author.permissions, PERMISSIONS.MANAGE_THREADS)) throw new ApiError('THREAD_LOCKED');
    }
    if (!row.archived) return;
    await this.threads.unarchive(row.id, new Date(this.clock.now()));
    const updated = (await this.threads.find(row.id)) as ThreadChannelRow;
    await this.events.thread('THREAD_UPDATE', updated, threadView(updated));
  }

  async afterMessage(channel: ChannelRow, authorId: string | null, mentioned: readonly string[]): Promise<void> {
    await this.threads.countMessage(channel.id, new Date(this.clock.now()));
    const row = isThreadRow(channel) ? channel : await this.threads.find(channel.id);
    if (!row) return;
    if (authorId) await this.addMember(row, authorId);
    const others = mentioned.filter((id) => id !== authorId);
    if (others.length === 0) return;
    if (!(await this.mentionsAdd(row, authorId))) return;
    for (const userId of others) {
      const canSee = await this.access
        .channel(row.parent_id, userId, this.clock.now())
        .then(() => true)
        .catch(() => false);
      if (canSee) await this.addMember(row, userId);
    }
  }

  /**
   * Whether the author's mentions add people (who can see the parent) to the thread: always, except into
   * a private thread that is not invitable, where only a moderator's (or the owner's) mention does.
   */
  async mentionsAdd(channel: ChannelRow, authorId: string | null): Promise<boolean> {
    const row = isThreadRow(channel) ? channel : await this.threads.find(channel.id);
    if (!row) return false;
    if (row.type !== CHANNEL_TYPES.PRIVATE_THREAD || row.invitable || !authorId || row.owner_id === authorId)
      return true;
    const author = await this.access.channel(row.parent_id, authorId, this.clock.now());
    return has(author.permissions, PERMISSIONS.MANAGE_THREADS);
  }

  async startedThreads(messageIds: readonly string[]): Promise<Map<string, ThreadView>> {
    const rows = await this.threads.findMany(messageIds);
    return new Map(rows.map((row) => [row.id, threadView(row)]));
  }

  /** Archives every thread idle for its auto_archive_duration; returns how many. */
  async archiveIdle(): Promise<number> {
    const archived = await this.threads.archiveIdle(new Date(this.clock.now()), 500);
    for (const threadId of archived) {
      const row = await this.threads.find(threadId);
      if (row) await this.events.thread('THREAD_UPDATE', row, threadView(row));
    }
    return archived.length;
  }
}

/** The fields of a thread its audit entries show (Discord's keys). */
const THREAD_AUDIT_KEYS = [
  'name',
  'type',
  'archived',
  'locked',
  'auto_archive_duration',
  'rate_limit_per_user',
  'invitable',
] as const;

function threadAuditFields(row: ThreadChannelRow): Record<string, unknown> {
  return {
    name: row.name,
    type: row.type,
    archived: row.archived,
    locked: row.locked,
    auto_archive_duration: row.auto_archive_duration,
    rate_limit_per_user: row.rate_limit_per_user,
    ...(row.type === CHANNEL_TYPES.PRIVATE_THREAD ? { invitable: row.invitable } : {}),
  };
}

function isThreadRow(channel: ChannelRow): channel is ThreadChannelRow {
  return 'archived' in channel && 'invitable' in channel;
}
