import { ApiError } from '../../http/errors.ts';
import type { PartialUser, UserRecord } from '../../identity/user-record.ts';
import { partialUser } from '../../identity/user-record.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { AttachmentView } from '../attachments/attachment-view.ts';
import { resolveEmbedAttachments } from './embed-attachments.ts';
import type { ChatEvents } from './events.ts';
import { type AllowedMentions, effectiveMentions, parseMentions, pingsRepliedUser } from './mentions.ts';
import { CLIENT_MESSAGE_FLAGS, type Embed, MESSAGE_REFERENCE_TYPES } from './message-body.ts';
import {
  CHANNEL_TYPES,
  type ChannelRow,
  iso,
  isThread,
  MESSAGE_COLUMNS,
  type MemberRow,
  type MessageRow,
  THREAD_TYPES,
} from './rows.ts';
import { stickerItemView, stickersByIds, stickerView } from './sticker-store.ts';
import type { ChatStore } from './store.ts';
import type { ThreadView } from './thread-views.ts';
import { type MessageEventView, type MessageView, memberView, timestampOf } from './views.ts';

export const MESSAGE_TYPES = {
  DEFAULT: 0,
  RECIPIENT_ADD: 1,
  RECIPIENT_REMOVE: 2,
  CALL: 3,
  CHANNEL_NAME_CHANGE: 4,
  CHANNEL_ICON_CHANGE: 5,
  GUILD_MEMBER_JOIN: 7,
  THREAD_CREATED: 18,
  REPLY: 19,
} as const;

export interface WebhookAuthor {
  id: string;
  name: string;
  avatar: string | null;
}

export interface MessageReferenceInput {
  message_id: string;
  channel_id?: string | undefined;
  guild_id?: string | undefined;
  fail_if_not_exists?: boolean | undefined;
}

export interface CreateMessageInput {
  channel: ChannelRow;
  /** An id minted by the caller (who must record it before the message is announced); a new one when absent. */
  id?: string | undefined;
  /** DM recipients (the audience of a DM message); looked up when absent. */
  recipients?: string[] | undefined;
  /** The posting user; `null` for webhook messages. */
  author: UserRecord | null;
  webhook?: WebhookAuthor | undefined;
  content?: string | null | undefined;
  embeds?: Embed[] | null | undefined;
  /** Stored attachment objects (docs/chat.md attachment shape), already uploaded and checked. */
  attachments?: AttachmentView[] | undefined;
  tts?: boolean | null | undefined;
  flags?: number | null | undefined;
  nonce?: string | number | null | undefined;
  messageReference?: MessageReferenceInput | null | undefined;
  allowedMentions?: AllowedMentions | null | undefined;
  stickerIds?: string[] | null | undefined;
  /** A system message pointing at another channel (THREAD_CREATED → the thread): reference without a message. */
  channelReference?: string | undefined;
  /** Whether @everyone, @here and unmentionable roles ping (MENTION_EVERYONE; webhooks: true). */
  canMentionEveryone: boolean;
  type?: number;
  /** Users a system message is about (RECIPIENT_ADD/REMOVE: the added or removed user), listed in `mentions`. */
  subjectUserIds?: readonly string[] | undefined;
  /** The author's member row when the caller already has it (saves a query on the hot path). */
  authorMember?: MemberRow | undefined;
  /** Extra members of the message object: `components` (validated by the caller), interaction metadata. */
  extras?: Record<string, unknown> | undefined;
  /** Flags only the server sets (LOADING of a deferred interaction response), kept as given. */
  serverFlags?: number | undefined;
  /** A forward: the source message and its snapshot (`snapshotOf`), instead of content of its own. */
  forward?: { source: MessageRow; snapshot: Record<string, unknown> } | undefined;
}

export interface EditMessageInput {
  content?: string | null | undefined;
  embeds?: Embed[] | null | undefined;
  attachments?: AttachmentView[] | undefined;
  flags?: number | null | undefined;
  allowedMentions?: AllowedMentions | null | undefined;
  canMentionEveryone: boolean;
  /** Replaces members of `extras` (e.g. `components`); a member set to undefined is left as it was. */
  extras?: Record<string, unknown> | undefined;
}

interface ReactionAggregate {
  message_id: string;
  emoji_key: string;
  emoji_id: string | null;
  emoji_name: string | null;
  animated: boolean;
  count: number;
  me: boolean;
}

const TEXT_TYPES: ReadonlySet<number> = new Set([
  CHANNEL_TYPES.GUILD_TEXT,
  CHANNEL_TYPES.DM,
  CHANNEL_TYPES.GROUP_DM,
  ...THREAD_TYPES,
]);

/** Whether messages can be posted in a channel of this type (text channels, DMs, group DMs, threads). */
export function holdsMessages(channel: Pick<ChannelRow, 'type'>): boolean {
  return TEXT_TYPES.has(channel.type);
}

/** Message flag HAS_THREAD: a thread was started from this message (the thread has the message's id). */
export const HAS_THREAD_FLAG = 1 << 5;
/** Message flag HAS_SNAPSHOT: the message is a forward and carries `message_snapshots`. */
export const HAS_SNAPSHOT_FLAG = 1 << 14;

/** Message types people write (an ordinary message, a reply, a command's answer): all others are system messages. */
const NON_SYSTEM_TYPES: ReadonlySet<number> = new Set([0, 19, 20, 23]);

export function isSystemMessage(row: Pick<MessageRow, 'type'>): boolean {
  return !NON_SYSTEM_TYPES.has(row.type);
}

/** A forward keeps its snapshot in `extras.message_snapshots` (so it renders as the message object's member). */
export function isForward(row: Pick<MessageRow, 'extras'>): boolean {
  return Array.isArray(row.extras?.message_snapshots);
}

/** What the threads module does around messages (see thread-service.ts). */
export interface ThreadHooks {
  /** Refuses (locked) or unarchives (archived) before a message lands in a thread. */
  beforeMessage(thread: ChannelRow, authorId: string | null): Promise<void>;
  /** Counts the message, joins the author and the members it mentions. */
  afterMessage(thread: ChannelRow, authorId: string | null, mentionedUserIds: readonly string[]): Promise<void>;
  /** The thread objects started from these messages, by message id. */
  startedThreads(messageIds: readonly string[]): Promise<Map<string, ThreadView>>;
}

/** The mentions of a message that ping (after allowed_mentions and permissions). */
export interface PingedMentions {
  users: readonly string[];
  roles: readonly string[];
  everyone: boolean;
  /** `everyone` came from `@here` alone (no `@everyone`): only the members online then are pinged. */
  hereOnly?: boolean;
}

const EVERYONE_TEXT = /@everyone\b/;

/**
 * Of the members a guild message pings, those who may view its channel (whose read state counts the
 * mention). Set by the chat module from the read model's snapshots.
 */
export type MentionAudience = (
  channel: ChannelRow,
  pinged: PingedMentions,
  authorId: string | null,
) => Promise<string[]>;

/**
 * Message creation, editing and rendering. Routes, webhook execution and the test harness all create
 * messages through `create`, so validation, mentions, storage and the MESSAGE_CREATE dispatch stay in one place.
 */
export class MessageService {
  private threadHooks: ThreadHooks | undefined;
  private mentionAudience: MentionAudience | undefined;

  constructor(
    private readonly store: ChatStore,
    private readonly events: ChatEvents,
    private readonly ids: SnowflakeGenerator,
    private readonly clock: Clock,
  ) {}

  private get db(): Queryable {
    return this.store.db;
  }

  setThreadHooks(hooks: ThreadHooks): void {
    this.threadHooks = hooks;
  }

  setMentionAudience(audience: MentionAudience): void {
    this.mentionAudience = audience;
  }

  /**
   * Whose read state a new message changes: the pinged viewers' mention counts go up (in a DM or group DM
   * every message counts for the other recipients, as on Discord), and a person's own message acks the
   * channel for them (`author`, null for webhooks and bots).
   */
  private async readStateChanges(
    channel: ChannelRow,
    pinged: PingedMentions,
    recipients: readonly string[] | undefined,
    author: UserRecord | null,
  ): Promise<{ mentioned: string[]; author: string | null }> {
    const authorId = author?.id ?? null;
    const audience =
      channel.guild_id === null
        ? (recipients ?? [])
        : this.mentionAudience && (pinged.everyone || pinged.users.length > 0 || pinged.roles.length > 0)
          ? await this.mentionAudience(channel, pinged, authorId)
          : [];
    return {
      mentioned: [...new Set(audience)].filter((id) => id !== authorId),
      author: author && !author.isBot ? author.id : null,
    };
  }

  async create(input: CreateMessageInput): Promise<MessageView> {
    const { channel } = input;
    if (!holdsMessages(channel)) throw new ApiError('CANNOT_SEND_MESSAGES_IN_NON_TEXT_CHANNEL');
    const content = input.content ?? '';
    const attachments = input.attachments ?? [];
    const embeds = resolveEmbedAttachments(input.embeds ?? [], attachments);
    const stickerIds = input.stickerIds ?? [];
    const type = input.type ?? MESSAGE_TYPES.DEFAULT;
    const hasComponents = Array.isArray(input.extras?.components) && input.extras.components.length > 0;
    const forward = input.forward;
    if (
      type === MESSAGE_TYPES.DEFAULT &&
      !forward &&
      content.trim() === '' &&
      embeds.length === 0 &&
      attachments.length === 0 &&
      stickerIds.length === 0 &&
      !hasComponents
    )
      throw new ApiError('CANNOT_SEND_EMPTY_MESSAGE');

    const inThread = isThread(channel) ? this.threadHooks : undefined;
    await inThread?.beforeMessage(channel, input.author?.id ?? null);
    let referenced: MessageRow | undefined;
    if (input.messageReference && !forward) {
      referenced = await this.referencedMessage(channel, input.messageReference);
    }
    const mentions = await this.mentionsFor(
      channel,
      content,
      input.allowedMentions ?? undefined,
      input.canMentionEveryone,
    );
    if (
      referenced?.author_id &&
      pingsRepliedUser(input.allowedMentions ?? undefined) &&
      !mentions.users.includes(referenced.author_id)
    )
      mentions.users.push(referenced.author_id);

    const recipients =
      channel.guild_id === null ? (input.recipients ?? (await this.store.recipientIds(channel.id))) : undefined;
    const reads = await this.readStateChanges(
      channel,
      { ...mentions, hereOnly: mentions.everyone && !EVERYONE_TEXT.test(content) },
      recipients,
      input.author,
    );
    const id = input.id ?? this.ids.next();
    // A forward points at its source (possibly in another channel or guild) and freezes it in the snapshot.
    const extras = forward ? { ...input.extras, message_snapshots: [{ message: forward.snapshot }] } : input.extras;
    const reference = forward
      ? { message: forward.source.id, channel: forward.source.channel_id, guild: forward.source.guild_id }
      : referenced
        ? { message: referenced.id, channel: channel.id, guild: channel.guild_id }
        : input.channelReference
          ? { message: null, channel: input.channelReference, guild: channel.guild_id }
          : { message: null, channel: null, guild: null };
    // One statement stores the message, moves the channel's last message and updates the read states: the
    // pinged viewers' mention counts (a row appears with the first mention) and the author's own ack.
    const [row] = await this.db.query<MessageRow>(
      `WITH inserted AS (
         INSERT INTO messages (id, channel_id, guild_id, author_id, webhook_id, webhook_name, webhook_avatar, type, flags,
                               content, mention_everyone, tts, mentions, mention_roles, embeds, attachments, sticker_ids,
                               reference_message_id, reference_channel_id, reference_guild_id, extras)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::bigint[], $14::bigint[], $15::jsonb, $16::jsonb,
                 $17::bigint[], $18, $19, $20, $21::jsonb)
         RETURNING *),
       touched AS (UPDATE channels SET last_message_id = $1 WHERE id = $2 AND (last_message_id IS NULL OR last_message_id < $1)),
       read AS (
         INSERT INTO read_states AS rs (user_id, channel_id, last_message_id, mention_count, version, updated_at)
         SELECT u, $2, CASE WHEN u = $23::bigint THEN $1 ELSE 0 END, CASE WHEN u = $23::bigint THEN 0 ELSE 1 END,
                CASE WHEN u = $23::bigint THEN 1 ELSE 0 END, $24::timestamptz
           FROM unnest($22::bigint[]) AS u
         ON CONFLICT (user_id, channel_id) DO UPDATE SET
           last_message_id = CASE WHEN rs.user_id = $23::bigint THEN greatest(rs.last_message_id, $1) ELSE rs.last_message_id END,
           mention_count = CASE WHEN rs.user_id = $23::bigint THEN 0 ELSE rs.mention_count + 1 END,
           version = CASE WHEN rs.user_id = $23::bigint THEN rs.version + 1 ELSE rs.version END,
           updated_at = CASE WHEN rs.user_id = $23::bigint THEN $24::timestamptz ELSE rs.updated_at END)
       SELECT ${MESSAGE_COLUMNS} FROM inserted msg`,
      [
        id,
        channel.id,
        channel.guild_id,
        input.author?.id ?? null,
        input.webhook?.id ?? null,
        input.webhook?.name ?? null,
        input.webhook?.avatar ?? null,
        referenced ? MESSAGE_TYPES.REPLY : type,
        ((input.flags ?? 0) & CLIENT_MESSAGE_FLAGS) | (input.serverFlags ?? 0) | (forward ? HAS_SNAPSHOT_FLAG : 0),
        content,
        mentions.everyone,
        input.tts === true,
        [...new Set([...mentions.users, ...(input.subjectUserIds ?? [])])],
        mentions.roles,
        JSON.stringify(embeds),
        JSON.stringify(attachments),
        stickerIds,
        reference.message,
        reference.channel,
        reference.guild,
        extras && Object.keys(extras).length > 0 ? JSON.stringify(extras) : null,
        reads.author ? [...reads.mentioned, reads.author] : reads.mentioned,
        reads.author,
        new Date(this.clock.now()),
      ],
    );
    if (!row) throw new Error('message insert returned nothing');
    const [view] = await this.render([row], undefined, {
      knownUsers: [...mentions.loaded.values(), ...(input.author ? [input.author] : [])],
      fresh: true,
    });
    const message: MessageView = { ...(view as MessageView) };
    if (input.nonce !== undefined && input.nonce !== null) message.nonce = input.nonce;
    await this.dispatchWithMember(
      'MESSAGE_CREATE',
      channel,
      recipients,
      message,
      input.author?.id ?? null,
      input.authorMember,
    );
    await inThread?.afterMessage(channel, input.author?.id ?? null, row.mentions);
    return message;
  }

  async edit(channel: ChannelRow, existing: MessageRow, input: EditMessageInput, recipients?: string[]) {
    const content = input.content === undefined ? existing.content : (input.content ?? '');
    const attachments = input.attachments === undefined ? existing.attachments : input.attachments;
    const embeds =
      input.embeds === undefined ? existing.embeds : resolveEmbedAttachments(input.embeds ?? [], attachments);
    const extras = input.extras ? mergeExtras(existing.extras, input.extras) : existing.extras;
    const hasComponents = Array.isArray(extras?.components) && extras.components.length > 0;
    if (
      !isForward(existing) &&
      content.trim() === '' &&
      embeds.length === 0 &&
      attachments.length === 0 &&
      existing.sticker_ids.length === 0 &&
      !hasComponents
    )
      throw new ApiError('CANNOT_SEND_EMPTY_MESSAGE');
    const flags =
      input.flags === undefined || input.flags === null
        ? existing.flags
        : (existing.flags & ~CLIENT_MESSAGE_FLAGS) | (input.flags & CLIENT_MESSAGE_FLAGS);
    let mentionUsers = existing.mentions;
    let mentionRoles = existing.mention_roles;
    let everyone = existing.mention_everyone;
    let mentionedUsers: readonly UserRecord[] = [];
    if (input.content !== undefined || input.allowedMentions !== undefined) {
      const mentions = await this.mentionsFor(
        channel,
        content,
        input.allowedMentions ?? undefined,
        input.canMentionEveryone,
      );
      mentionUsers = mentions.users;
      mentionRoles = mentions.roles;
      everyone = mentions.everyone;
      mentionedUsers = [...mentions.loaded.values()];
    }
    const [row] = await this.db.query<MessageRow>(
      `UPDATE messages msg SET content = $2, embeds = $3::jsonb, attachments = $4::jsonb, flags = $5, mentions = $6::bigint[],
              mention_roles = $7::bigint[], mention_everyone = $8, edited_at = $9, extras = $10::jsonb
        WHERE id = $1 RETURNING ${MESSAGE_COLUMNS}`,
      [
        existing.id,
        content,
        JSON.stringify(embeds),
        JSON.stringify(attachments),
        flags,
        mentionUsers,
        mentionRoles,
        everyone,
        new Date(this.clock.now()),
        extras ? JSON.stringify(extras) : null,
      ],
    );
    if (!row) throw new ApiError('UNKNOWN_MESSAGE');
    const [view] = await this.render([row], undefined, { knownUsers: mentionedUsers });
    const message = view as MessageView;
    await this.dispatchWithMember('MESSAGE_UPDATE', channel, recipients, message, row.author_id);
    return message;
  }

  /**
   * Replaces members of a system message's `extras` (a call's `call` object) without marking it edited, and
   * announces MESSAGE_UPDATE. Nothing when the message is gone.
   */
  async setExtras(channel: ChannelRow, messageId: string, extras: Record<string, unknown>): Promise<void> {
    const [row] = await this.db.query<MessageRow>(
      `UPDATE messages msg SET extras = coalesce(extras, '{}'::jsonb) || $3::jsonb
        WHERE id = $1 AND channel_id = $2 RETURNING ${MESSAGE_COLUMNS}`,
      [messageId, channel.id, JSON.stringify(extras)],
    );
    if (!row) return;
    const [view] = await this.render([row], undefined);
    await this.dispatchWithMember('MESSAGE_UPDATE', channel, undefined, view as MessageView, row.author_id);
  }

  /**
   * Attachments `before` had that `after` lacks: their files go (`AttachmentService.discard`), once no forward of
   * the message shows them any more.
   */
  droppedAttachments(before: MessageRow, after: MessageView): AttachmentView[] {
    const kept = new Set(after.attachments.map((a) => a.id));
    return before.attachments.filter((a) => !kept.has(a.id));
  }

  async find(channelId: string, messageId: string, db: Queryable = this.db): Promise<MessageRow | undefined> {
    const [row] = await db.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages msg WHERE msg.id = $1 AND msg.channel_id = $2`,
      [messageId, channelId],
    );
    return row;
  }

  async require(channelId: string, messageId: string): Promise<MessageRow> {
    const row = await this.find(channelId, messageId);
    if (!row) throw new ApiError('UNKNOWN_MESSAGE');
    return row;
  }

  /**
   * Message objects for rows (docs/chat.md): authors, mentioned users, reactions (with `me` for the viewer)
   * and one level of `referenced_message`, in at most four queries whatever the number of rows (five when a
   * message carries stickers).
   */
  async render(
    rows: readonly MessageRow[],
    viewerId: string | undefined,
    options: { knownUsers?: readonly UserRecord[]; fresh?: boolean } = {},
  ): Promise<MessageView[]> {
    if (rows.length === 0) return [];
    // A forward's source is not rendered: its snapshot stands for it, and the viewer may not see its channel.
    const referenceIds = [
      ...new Set(rows.flatMap((r) => (r.reference_message_id && !isForward(r) ? [r.reference_message_id] : []))),
    ];
    const referenced = referenceIds.length
      ? await this.db.query<MessageRow>(
          `SELECT ${MESSAGE_COLUMNS} FROM messages msg WHERE msg.id = ANY($1::bigint[])`,
          [referenceIds],
        )
      : [];
    const all = [...rows, ...referenced];
    const userIds = all.flatMap((r) => [...(r.author_id ? [r.author_id] : []), ...r.mentions]);
    const known = new Map((options.knownUsers ?? []).map((u) => [u.id, u]));
    const missing = userIds.filter((id) => !known.has(id));
    // A message just written has no reactions yet: `fresh` skips that query on the create path.
    const [loaded, reactions] = await Promise.all([
      missing.length > 0 ? this.store.usersByIds(missing) : Promise.resolve(new Map<string, UserRecord>()),
      options.fresh
        ? Promise.resolve(new Map<string, ReactionAggregate[]>())
        : this.reactionsFor(
            rows.map((r) => r.id),
            viewerId,
          ),
    ]);
    const users = new Map([...known, ...loaded]);
    const starters = rows.filter((r) => (r.flags & HAS_THREAD_FLAG) !== 0).map((r) => r.id);
    const threads =
      starters.length > 0 && this.threadHooks ? await this.threadHooks.startedThreads(starters) : new Map();
    const referencedById = new Map(referenced.map((r) => [r.id, r]));
    const stickerIds = all.flatMap((r) => r.sticker_ids);
    const stickers =
      stickerIds.length > 0 ? new Map((await stickersByIds(this.db, stickerIds)).map((s) => [s.id, s])) : new Map();
    const base = (row: MessageRow): MessageView => {
      // A sticker deleted since the message was sent is dropped, as on Discord.
      const sent = row.sticker_ids.flatMap((id) => {
        const sticker = stickers.get(id);
        return sticker ? [sticker] : [];
      });
      const view: MessageView = {
        id: row.id,
        channel_id: row.channel_id,
        author: authorView(row, users),
        ...(row.webhook_id ? { webhook_id: row.webhook_id } : {}),
        type: row.type,
        flags: row.flags,
        content: row.content,
        timestamp: timestampOf(row.id),
        edited_timestamp: iso(row.edited_at),
        pinned: row.pinned_at !== null,
        mention_everyone: row.mention_everyone,
        tts: row.tts,
        mentions: row.mentions.flatMap((id) => {
          const user = users.get(id);
          return user ? [partialUser(user)] : [];
        }),
        mention_roles: row.mention_roles,
        embeds: row.embeds,
        attachments: row.attachments,
        stickers: sent.map((s) => stickerView(s)),
        ...(sent.length > 0 ? { sticker_items: sent.map(stickerItemView) } : {}),
        components: [],
        ...(row.extras ?? {}),
      };
      return view;
    };
    return rows.map((row) => {
      const view = base(row);
      const thread = threads.get(row.id);
      if (thread) view.thread = thread;
      const list = reactions.get(row.id);
      if (list && list.length > 0) {
        view.reactions = list.map((r) => ({
          emoji: { id: r.emoji_id, name: r.emoji_name, ...(r.emoji_id ? { animated: r.animated } : {}) },
          count: r.count,
          me: r.me,
        }));
      }
      if (row.reference_message_id && isForward(row)) {
        view.message_reference = {
          type: MESSAGE_REFERENCE_TYPES.FORWARD,
          message_id: row.reference_message_id,
          channel_id: row.reference_channel_id ?? row.channel_id,
          ...(row.reference_guild_id ? { guild_id: row.reference_guild_id } : {}),
        };
      } else if (row.reference_message_id) {
        view.message_reference = {
          message_id: row.reference_message_id,
          channel_id: row.reference_channel_id ?? row.channel_id,
          ...(row.reference_guild_id ? { guild_id: row.reference_guild_id } : {}),
        };
        const target = referencedById.get(row.reference_message_id);
        view.referenced_message = target ? base(target) : null;
      } else if (row.reference_channel_id) {
        view.message_reference = {
          channel_id: row.reference_channel_id,
          ...(row.reference_guild_id ? { guild_id: row.reference_guild_id } : {}),
        };
      }
      return view;
    });
  }

  /**
   * What a forward freezes of its source (discord-api-types `APIMessageSnapshot.message`): the content and media,
   * not the author, the reactions or the reference. A forward of a forward snapshots the original.
   */
  async snapshotOf(source: MessageRow): Promise<Record<string, unknown>> {
    const inner = source.extras?.message_snapshots;
    if (Array.isArray(inner) && inner.length > 0) return (inner[0] as { message: Record<string, unknown> }).message;
    const [view] = await this.render([source], undefined, { fresh: true });
    if (!view) throw new Error('snapshot render returned nothing');
    return {
      type: view.type,
      content: view.content,
      embeds: view.embeds,
      attachments: view.attachments,
      timestamp: view.timestamp,
      edited_timestamp: view.edited_timestamp,
      flags: view.flags & ~HAS_THREAD_FLAG,
      mentions: view.mentions,
      mention_roles: view.mention_roles,
      ...(view.stickers.length > 0 ? { stickers: view.stickers } : {}),
      ...(view.sticker_items ? { sticker_items: view.sticker_items } : {}),
      ...(Array.isArray(view.components) && view.components.length > 0 ? { components: view.components } : {}),
    };
  }

  /** MESSAGE_CREATE/UPDATE: guild messages also carry `member` (the author's, without `user`). */
  private async dispatchWithMember(
    event: 'MESSAGE_CREATE' | 'MESSAGE_UPDATE',
    channel: ChannelRow,
    recipients: string[] | undefined,
    message: MessageView,
    authorId: string | null,
    knownMember?: MemberRow,
  ): Promise<void> {
    if (channel.guild_id === null) {
      const audience = recipients ?? (await this.store.recipientIds(channel.id));
      await this.events.channel(event, { channel, recipients: audience }, message);
      return;
    }
    const payload: MessageEventView = { ...message };
    if (knownMember) {
      payload.member = memberView(knownMember, undefined, { includeUser: false });
    } else if (authorId) {
      const member = await this.store.member(channel.guild_id, authorId);
      if (member) payload.member = memberView(member, undefined, { includeUser: false });
    }
    await this.events.channel(event, { channel, recipients: undefined }, payload);
  }

  private async referencedMessage(
    channel: ChannelRow,
    reference: MessageReferenceInput,
  ): Promise<MessageRow | undefined> {
    const failIfMissing = reference.fail_if_not_exists !== false;
    const sameChannel = !reference.channel_id || reference.channel_id === channel.id;
    const row = sameChannel ? await this.find(channel.id, reference.message_id) : undefined;
    if (!row && failIfMissing) throw new ApiError('UNKNOWN_MESSAGE');
    return row;
  }

  /** The mentions that ping, and the mentioned users it loaded (`render` reuses them). */
  private async mentionsFor(
    channel: ChannelRow,
    content: string,
    allowed: AllowedMentions | undefined,
    canMentionEveryone: boolean,
  ): Promise<{ users: string[]; roles: string[]; everyone: boolean; loaded: ReadonlyMap<string, UserRecord> }> {
    const parsed = parseMentions(content);
    let mentionable = new Set<string>();
    if (channel.guild_id && parsed.roles.length > 0) {
      const rows = await this.db.query<{ id: string; mentionable: boolean }>(
        'SELECT id, mentionable FROM roles WHERE guild_id = $1 AND id = ANY($2::bigint[])',
        [channel.guild_id, parsed.roles],
      );
      const existing = new Set(rows.map((r) => r.id));
      parsed.roles = parsed.roles.filter((id) => existing.has(id));
      mentionable = new Set(rows.filter((r) => r.mentionable).map((r) => r.id));
    } else {
      parsed.roles = [];
    }
    let loaded: ReadonlyMap<string, UserRecord> = new Map();
    if (parsed.users.length > 0) {
      const users = await this.store.usersByIds(parsed.users);
      parsed.users = parsed.users.filter((id) => users.has(id));
      loaded = users;
    }
    return { ...effectiveMentions(parsed, allowed, { canMentionEveryone, mentionableRoleIds: mentionable }), loaded };
  }

  private async reactionsFor(
    messageIds: readonly string[],
    viewerId: string | undefined,
  ): Promise<Map<string, ReactionAggregate[]>> {
    const out = new Map<string, ReactionAggregate[]>();
    if (messageIds.length === 0) return out;
    const rows = await this.db.query<ReactionAggregate>(
      `SELECT message_id, emoji_key, max(emoji_id)::text AS emoji_id, max(emoji_name) AS emoji_name,
              bool_or(animated) AS animated, count(*)::int AS count, coalesce(bool_or(user_id = $2), false) AS me
         FROM reactions WHERE message_id = ANY($1::bigint[])
        GROUP BY message_id, emoji_key ORDER BY min(created_at), emoji_key`,
      [messageIds, viewerId ?? '0'],
    );
    for (const row of rows) out.set(row.message_id, [...(out.get(row.message_id) ?? []), row]);
    return out;
  }
}

function authorView(row: MessageRow, users: ReadonlyMap<string, UserRecord>): PartialUser {
  if (row.webhook_id) {
    return {
      id: row.webhook_id,
      username: row.webhook_name ?? 'Webhook',
      discriminator: '0000',
      global_name: null,
      avatar: row.webhook_avatar,
      avatar_color: null,
      bot: true,
      flags: 0,
    };
  }
  const user = row.author_id ? users.get(row.author_id) : undefined;
  if (user) return partialUser(user);
  return {
    id: row.author_id ?? '0',
    username: 'Deleted User',
    discriminator: '0000',
    global_name: null,
    avatar: null,
    avatar_color: null,
    flags: 0,
  };
}

/** Members set in `changes` replace those of `existing`; undefined ones leave them. */
function mergeExtras(
  existing: Record<string, unknown> | null,
  changes: Record<string, unknown>,
): Record<string, unknown> | null {
  const merged: Record<string, unknown> = { ...(existing ?? {}) };
  for (const [key, value] of Object.entries(changes)) if (value !== undefined) merged[key] = value;
  return Object.keys(merged).length > 0 ? merged : null;
}
