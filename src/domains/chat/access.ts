import { ApiError, type ErrorCode } from '../../http/errors.ts';
import type { RequestContext } from '../../http/route.ts';
import { parseSnowflake } from '../../platform/crypto/snowflake.ts';
import type { Queryable } from '../../platform/db/database.ts';
import {
  computeBasePermissions,
  computeChannelPermissions,
  has,
  type Overwrite,
  PERMISSIONS,
  type PermissionSubject,
  parsePermissions,
  threadPermissions,
  topRolePosition,
} from './permissions.ts';
import { CHANNEL_TYPES, type ChannelRow, type GuildRow, isThread, type MemberRow, type RoleRow } from './rows.ts';
import type { ChatStore, GuildBundle } from './store.ts';
import type { ThreadChannelRow, ThreadStore } from './thread-store.ts';

/** A path id that is not a snowflake names nothing: the resource's UNKNOWN_* code, never a 500. */
export function pathId(raw: string | undefined, unknown: ErrorCode): string {
  const parsed = parseSnowflake(raw);
  if (!parsed.ok) throw new ApiError(unknown);
  return parsed.value;
}

/** What a DM or group-DM recipient may do: no moderation bits. */
export const DM_PERMISSIONS =
  PERMISSIONS.VIEW_CHANNEL |
  PERMISSIONS.SEND_MESSAGES |
  PERMISSIONS.READ_MESSAGE_HISTORY |
  PERMISSIONS.ADD_REACTIONS |
  PERMISSIONS.EMBED_LINKS |
  PERMISSIONS.ATTACH_FILES |
  PERMISSIONS.USE_EXTERNAL_EMOJIS |
  PERMISSIONS.PIN_MESSAGES |
  PERMISSIONS.SEND_TTS_MESSAGES;

export function toOverwrites(channel: Pick<ChannelRow, 'permission_overwrites'>): Overwrite[] {
  return channel.permission_overwrites.map((o) => ({
    id: String(o.id),
    type: Number(o.type),
    allow: parsePermissions(o.allow),
    deny: parsePermissions(o.deny),
  }));
}

/** The caller's standing in one guild: permissions, hierarchy and the rows they came from. */
export class GuildContext {
  readonly guild: GuildRow;
  readonly member: MemberRow;
  readonly roles: RoleRow[];
  readonly userId: string;
  readonly subject: PermissionSubject;
  readonly positions: Map<string, number>;
  readonly permissions: bigint;
  readonly isOwner: boolean;
  readonly topPosition: number;

  constructor(bundle: GuildBundle & { member: MemberRow }, userId: string, now: number) {
    this.guild = bundle.guild;
    this.member = bundle.member;
    this.roles = bundle.roles;
    this.userId = userId;
    this.subject = subjectFor(bundle.guild, bundle.roles, bundle.member, now);
    this.positions = new Map(bundle.roles.map((r) => [r.id, r.position]));
    this.permissions = computeBasePermissions(this.subject);
    this.isOwner = bundle.guild.owner_id === userId;
    this.topPosition = topRolePosition(this.subject, this.positions);
  }

  get guildId(): string {
    return this.guild.id;
  }

  can(bit: bigint): boolean {
    return has(this.permissions, bit);
  }

  require(bit: bigint): void {
    if (!this.can(bit)) throw new ApiError('MISSING_PERMISSIONS');
  }

  channelPermissions(channel: Pick<ChannelRow, 'permission_overwrites'>): bigint {
    return computeChannelPermissions(this.subject, toOverwrites(channel));
  }

  role(roleId: string): RoleRow | undefined {
    return this.roles.find((r) => r.id === roleId);
  }

  /** A role the caller may manage: strictly below their top role (the owner outranks all). */
  requireBelowTop(role: RoleRow): void {
    if (!(role.position < this.topPosition)) throw new ApiError('MISSING_PERMISSIONS');
  }

  /** Another member the caller may moderate: not the owner, and with a top role below the caller's. */
  requireOutranks(target: MemberRow): void {
    if (target.user_id === this.guild.owner_id) throw new ApiError('MISSING_PERMISSIONS');
    if (this.isOwner) return;
    const targetTop = topRolePosition(
      { userId: target.user_id, ownerId: this.guild.owner_id, memberRoleIds: target.roles },
      this.positions,
    );
    if (!(targetTop < this.topPosition)) throw new ApiError('MISSING_PERMISSIONS');
  }
}

export function subjectFor(
  guild: GuildRow,
  roles: readonly RoleRow[],
  member: MemberRow,
  now: number,
): PermissionSubject {
  const until = member.communication_disabled_until;
  const rolePermissions = new Map(roles.map((r) => [r.id, parsePermissions(r.permissions)]));
  return {
    guildId: guild.id,
    ownerId: guild.owner_id,
    userId: member.user_id,
    // A cached member row may still list a role deleted since (its overwrites linger on channels): ignore it.
    memberRoleIds: member.roles.filter((id) => rolePermissions.has(id)),
    rolePermissions,
    timedOutUntil: until ? new Date(until).getTime() : null,
    now,
  };
}

export interface ChannelAccess {
  channel: ChannelRow;
  /** Set for guild channels. */
  guild: GuildContext | undefined;
  /** Set for DM and group-DM channels. */
  recipients: string[] | undefined;
  permissions: bigint;
  /** Set for threads: the caller's standing in the thread and its parent. */
  thread?: ThreadAccess | undefined;
}

export interface ThreadAccess {
  row: ThreadChannelRow;
  parent: ChannelRow;
  /** The caller's permissions in the parent channel (threads have no overwrites of their own). */
  parentPermissions: bigint;
  isMember: boolean;
}

export function isPrivateChannel(channel: Pick<ChannelRow, 'type'>): boolean {
  return channel.type === CHANNEL_TYPES.DM || channel.type === CHANNEL_TYPES.GROUP_DM;
}

export class Access {
  constructor(
    private readonly store: ChatStore,
    private readonly threads: ThreadStore,
  ) {}

  /**
   * In a 1:1 DM, a block on either side stops what a message would do there (send, pin, a scheduled message's
   * delivery); the answer (Discord's 50007) does not say who blocked whom. Other channels pass.
   */
  async refuseBlockedDm(channelAccess: ChannelAccess, userId: string): Promise<void> {
    if (channelAccess.channel.type !== CHANNEL_TYPES.DM) return;
    const other = channelAccess.recipients?.find((id) => id !== userId);
    if (other && (await this.store.blockedBetween(userId, other)))
      throw new ApiError('CANNOT_SEND_MESSAGES_TO_THIS_USER');
  }

  /** The caller must be a member: missing guild → UNKNOWN_GUILD, not a member → MISSING_ACCESS. */
  async guild(guildId: string, userId: string, now: number, db?: Queryable): Promise<GuildContext> {
    const bundle = await this.store.guildBundle(guildId, userId, db);
    if (!bundle) throw new ApiError('UNKNOWN_GUILD');
    if (!bundle.member) throw new ApiError('MISSING_ACCESS');
    return new GuildContext({ ...bundle, member: bundle.member }, userId, now);
  }

  async guildWith(guildId: string, userId: string, now: number, bit: bigint, db?: Queryable): Promise<GuildContext> {
    const ctx = await this.guild(guildId, userId, now, db);
    ctx.require(bit);
    return ctx;
  }

  /** The caller must see the channel (membership + VIEW_CHANNEL, or DM recipient), else MISSING_ACCESS. */
  async channel(channelId: string, userId: string, now: number, db?: Queryable): Promise<ChannelAccess> {
    const channel = await this.store.channel(channelId, db);
    if (!channel) throw new ApiError('UNKNOWN_CHANNEL');
    if (channel.guild_id === null) {
      const recipients = await this.store.recipientIds(channel.id, db);
      if (!recipients.includes(userId)) throw new ApiError('MISSING_ACCESS');
      return { channel, guild: undefined, recipients, permissions: DM_PERMISSIONS };
    }
    if (isThread(channel)) return this.thread(channel.id, userId, now, db);
    const guild = await this.guild(channel.guild_id, userId, now, db);
    const permissions = guild.channelPermissions(channel);
    if (!has(permissions, PERMISSIONS.VIEW_CHANNEL)) throw new ApiError('MISSING_ACCESS');
    return { channel, guild, recipients: undefined, permissions };
  }

  /**
   * A thread is seen by whoever sees its parent; a private thread only by its members and MANAGE_THREADS
   * holders. Permissions are the parent's, with SEND_MESSAGES standing for SEND_MESSAGES_IN_THREADS.
   */
  private async thread(threadId: string, userId: string, now: number, db?: Queryable): Promise<ChannelAccess> {
    const row = await this.threads.find(threadId, db);
    if (!row) throw new ApiError('UNKNOWN_CHANNEL');
    const [guild, parent, membership] = await Promise.all([
      this.guild(row.guild_id, userId, now, db),
      this.store.channel(row.parent_id, db),
      this.threads.member(row.id, userId, db),
    ]);
    if (!parent) throw new ApiError('UNKNOWN_CHANNEL');
    const parentPermissions = guild.channelPermissions(parent);
    if (!has(parentPermissions, PERMISSIONS.VIEW_CHANNEL)) throw new ApiError('MISSING_ACCESS');
    const isMember = membership !== undefined;
    if (row.type === CHANNEL_TYPES.PRIVATE_THREAD && !isMember && !has(parentPermissions, PERMISSIONS.MANAGE_THREADS))
      throw new ApiError('MISSING_ACCESS');
    return {
      channel: row,
      guild,
      recipients: undefined,
      permissions: threadPermissions(parentPermissions),
      thread: { row, parent, parentPermissions, isMember },
    };
  }

  /** The path's `:channelId` as the caller sees it (the first step of every channel route), optionally with `bit`. */
  channelOf(
    ctx: { params: RequestContext['params']; user: { id: string }; now: number },
    bit?: bigint,
  ): Promise<ChannelAccess> {
    const channelId = pathId(ctx.params.channelId, 'UNKNOWN_CHANNEL');
    return bit === undefined
      ? this.channel(channelId, ctx.user.id, ctx.now)
      : this.channelWith(channelId, ctx.user.id, ctx.now, bit);
  }

  async channelWith(
    channelId: string,
    userId: string,
    now: number,
    bit: bigint,
    db?: Queryable,
  ): Promise<ChannelAccess> {
    const access = await this.channel(channelId, userId, now, db);
    requireChannel(access, bit);
    return access;
  }
}

export function requireChannel(access: ChannelAccess, bit: bigint): void {
  if (!has(access.permissions, bit)) throw new ApiError('MISSING_PERMISSIONS');
}
