import { z } from 'zod';
import { ApiError, fieldError } from '../../http/errors.ts';
import { validate } from '../../http/validation.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import { partialUser } from '../../identity/user-record.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { constantTimeEqual, digest, randomBase64Url } from '../../platform/crypto/tokens.ts';
import type { ApplicationRecord, ApplicationsRepository } from '../applications/applications-repository.ts';
import type { ChannelAccess } from '../chat/access.ts';
import { embedSchema, MAX_CONTENT_LENGTH } from '../chat/message-body.ts';
import type { ChatModule } from '../chat/module.ts';
import { has, PERMISSIONS } from '../chat/permissions.ts';
import type { MessageRow } from '../chat/rows.ts';
import { channelView, memberView, roleView } from '../chat/views.ts';
import type { Dispatcher } from '../events/dispatch.ts';
import { COMMAND_TYPES, type CommandRow, OPTION_TYPES } from './commands.ts';
import { findComponent, messageComponentsSchema, modalSchema } from './components.ts';
import type { InteractionRow, InteractionsStore } from './store.ts';

export const INTERACTION_TYPES = {
  PING: 1,
  APPLICATION_COMMAND: 2,
  MESSAGE_COMPONENT: 3,
  AUTOCOMPLETE: 4,
  MODAL_SUBMIT: 5,
} as const;
export const CALLBACK_TYPES = {
  PONG: 1,
  CHANNEL_MESSAGE_WITH_SOURCE: 4,
  DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE: 5,
  DEFERRED_UPDATE_MESSAGE: 6,
  UPDATE_MESSAGE: 7,
  AUTOCOMPLETE_RESULT: 8,
  MODAL: 9,
} as const;
const MESSAGE_TYPE_CHAT_INPUT_COMMAND = 20;
const FLAG_EPHEMERAL = 1 << 6;
const FLAG_LOADING = 1 << 7;
/** Discord's windows: 3 s for the initial response, 15 min for follow-ups and edits. */
export const INITIAL_RESPONSE_MS = 3_000;
export const TOKEN_LIFETIME_MS = 15 * 60_000;
/** Interaction tokens start like Discord's (base64 of `interaction:`), so webhook routes can tell them apart. */
export const INTERACTION_TOKEN_PREFIX = 'aW50ZXJhY3Rpb246';

export function isInteractionToken(token: string): boolean {
  return token.startsWith(INTERACTION_TOKEN_PREFIX);
}

const snowflake = z.union([z.string().regex(/^\d{1,20}$/), z.number().int().min(0)]).transform(String);

const commandOption: z.ZodType<Record<string, unknown>> = z.lazy(() =>
  z
    .object({
      name: z.string().max(32),
      type: z.number().int().min(1).max(11),
      value: z.union([z.string().max(6000), z.number(), z.boolean()]).optional(),
      options: z.array(commandOption).max(25).optional(),
      focused: z.boolean().optional(),
    })
    .strict(),
);

/** The body a person's client sends to `POST /interactions`. */
export const invokeSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal(INTERACTION_TYPES.APPLICATION_COMMAND),
    application_id: snowflake,
    guild_id: snowflake.nullish(),
    channel_id: snowflake,
    session_id: z.string().max(64).nullish(),
    nonce: z.string().max(64).nullish(),
    data: z.object({
      id: snowflake,
      name: z.string().max(32),
      type: z.number().int().min(1).max(3).optional(),
      version: z.string().max(20).optional(),
      options: z.array(commandOption).max(25).optional(),
      target_id: snowflake.optional(),
    }),
  }),
  z.object({
    type: z.literal(INTERACTION_TYPES.AUTOCOMPLETE),
    application_id: snowflake,
    guild_id: snowflake.nullish(),
    channel_id: snowflake,
    session_id: z.string().max(64).nullish(),
    nonce: z.string().max(64).nullish(),
    data: z.object({
      id: snowflake,
      name: z.string().max(32),
      type: z.number().int().min(1).max(3).optional(),
      options: z.array(commandOption).max(25).optional(),
    }),
  }),
  z.object({
    type: z.literal(INTERACTION_TYPES.MESSAGE_COMPONENT),
    application_id: snowflake,
    guild_id: snowflake.nullish(),
    channel_id: snowflake,
    message_id: snowflake,
    session_id: z.string().max(64).nullish(),
    nonce: z.string().max(64).nullish(),
    data: z.object({
      component_type: z.number().int().min(2).max(8),
      custom_id: z.string().min(1).max(100),
      values: z.array(z.string().max(100)).max(25).optional(),
    }),
  }),
  z.object({
    type: z.literal(INTERACTION_TYPES.MODAL_SUBMIT),
    application_id: snowflake,
    guild_id: snowflake.nullish(),
    channel_id: snowflake,
    session_id: z.string().max(64).nullish(),
    nonce: z.string().max(64).nullish(),
    data: z.object({
      id: snowflake.optional(),
      custom_id: z.string().min(1).max(100),
      components: z
        .array(
          z.object({
            type: z.literal(1),
            components: z
              .array(
                z.object({ type: z.literal(4), custom_id: z.string().min(1).max(100), value: z.string().max(4000) }),
              )
              .length(1),
          }),
        )
        .min(1)
        .max(5),
    }),
  }),
]);
export type InvokeBody = z.infer<typeof invokeSchema>;

/** `data` of a message response (callback 4 and 7, follow-ups, edits). */
export const responseMessageSchema = z.object({
  content: z.string().max(MAX_CONTENT_LENGTH).nullish(),
  embeds: z.array(embedSchema).max(10).nullish(),
  components: messageComponentsSchema.nullish(),
  flags: z.number().int().min(0).nullish(),
  tts: z.boolean().nullish(),
  allowed_mentions: z.record(z.string(), z.unknown()).nullish(),
  attachments: z.array(z.unknown()).max(10).nullish(),
});
export type ResponseMessage = z.infer<typeof responseMessageSchema>;

export const callbackSchema = z.object({
  type: z.number().int().min(1).max(12),
  data: z.unknown().optional(),
});

export interface InteractionsDeps {
  store: InteractionsStore;
  apps: Pick<ApplicationsRepository, 'findById'>;
  chat: ChatModule;
  dispatcher: Dispatcher;
  ids: SnowflakeGenerator;
  clock: Clock;
  users: { findById(id: string): Promise<UserRecord | undefined> };
}

interface Invocation {
  app: ApplicationRecord & { botUserId: string };
  access: ChannelAccess;
  command?: CommandRow;
  message?: MessageRow;
}

/**
 * Interactions (docs/bots.md): a person invokes a command or clicks a component; the application's bot gets
 * INTERACTION_CREATE with a token; the bot answers through the callback, then follows up and edits through
 * the token for 15 minutes. Ephemeral answers reach only the person's sessions and are never stored with the
 * channel's messages.
 */
export class InteractionsService {
  constructor(private readonly deps: InteractionsDeps) {}

  async invoke(user: UserRecord, body: InvokeBody, now: number): Promise<void> {
    const { app, access, command, message } = await this.authorise(user, body, now);
    const id = this.deps.ids.next();
    const token = INTERACTION_TOKEN_PREFIX + randomBase64Url(48);
    const guildId = access.channel.guild_id;
    let modalCustomId: string | undefined;
    if (body.type === INTERACTION_TYPES.MODAL_SUBMIT) modalCustomId = body.data.custom_id;
    await this.deps.store.createInteraction({
      id,
      application_id: app.id,
      token_hash: digest(token),
      type: body.type,
      user_id: user.id,
      channel_id: access.channel.id,
      guild_id: guildId,
      message_id: message?.id ?? null,
      command_name: command?.name ?? null,
      created_at: new Date(now),
      expires_at: new Date(now + TOKEN_LIFETIME_MS),
    });
    const payload = await this.interactionPayload({
      id,
      token,
      app,
      user,
      access,
      body,
      command,
      message,
      modalCustomId,
    });
    await this.deps.dispatcher.dispatch('INTERACTION_CREATE', payload, { kind: 'users', userIds: [app.botUserId] });
    // The person's client learns the interaction's id for its nonce (as Discord's client does).
    await this.deps.dispatcher.dispatch(
      'INTERACTION_CREATE',
      { id, nonce: body.nonce ?? null },
      { kind: 'users', userIds: [user.id] },
    );
  }

  private async authorise(user: UserRecord, body: InvokeBody, now: number): Promise<Invocation> {
    const app = await this.deps.apps.findById(body.application_id);
    if (!app?.botUserId) throw new ApiError('UNKNOWN_APPLICATION');
    const bot = { ...app, botUserId: app.botUserId };
    const access = await this.deps.chat.access.channel(body.channel_id, user.id, now);
    const guildId = access.channel.guild_id;
    if ((body.guild_id ?? null) !== guildId) throw fieldError('guild_id', 'INVALID_FORMAT', 'Not the channel’s guild');
    // The application must be there: its bot a member of the guild, or a recipient of the DM.
    if (guildId) {
      const botMember = await this.deps.chat.store.guildBundle(guildId, app.botUserId);
      if (!botMember?.member) throw new ApiError('UNKNOWN_APPLICATION');
    } else if (!access.recipients?.includes(app.botUserId)) throw new ApiError('UNKNOWN_APPLICATION');

    if (body.type === INTERACTION_TYPES.APPLICATION_COMMAND || body.type === INTERACTION_TYPES.AUTOCOMPLETE) {
      const command = await this.deps.store.invocable(app.id, guildId, body.data.id);
      if (!command || command.name !== body.data.name) throw new ApiError('UNKNOWN_APPLICATION_COMMAND');
      await this.requireCommandPermission(command, access, user, guildId);
      return { app: bot, access, command };
    }
    if (body.type === INTERACTION_TYPES.MESSAGE_COMPONENT) {
      const message = await this.deps.chat.messages.find(access.channel.id, body.message_id);
      if (!message) throw new ApiError('UNKNOWN_MESSAGE');
      const owner = (message.extras?.application_id as string | undefined) ?? undefined;
      if (message.author_id !== app.botUserId && owner !== app.id) throw new ApiError('UNKNOWN_MESSAGE');
      const component = findComponent((message.extras?.components as unknown[] | undefined) ?? [], body.data.custom_id);
      if (!component || component.type !== body.data.component_type)
        throw fieldError('data', 'INVALID_FORMAT', 'No such component on the message');
      return { app: bot, access, message };
    }
    const shown = await this.deps.store.modalShown(app.id, user.id, access.channel.id, body.data.custom_id, now);
    if (!shown) throw fieldError('data', 'INVALID_FORMAT', 'No such modal was shown');
    return { app: bot, access };
  }

  /** `default_member_permissions`, then the guild's overrides for the user, their roles and the channel. */
  private async requireCommandPermission(
    command: CommandRow,
    access: ChannelAccess,
    user: UserRecord,
    guildId: string | null,
  ): Promise<void> {
    if (!guildId || !access.guild) {
      if (command.body.dm_permission === false) throw new ApiError('MISSING_PERMISSIONS');
      return;
    }
    const overrides =
      (await this.deps.store.commandPermissions(command.application_id, guildId, command.id)) ??
      (await this.deps.store.commandPermissions(command.application_id, guildId, command.application_id)) ??
      [];
    const entry = (id: string) => overrides.find((o) => o.id === id) as { permission?: boolean } | undefined;
    const forUser = entry(user.id);
    if (forUser) {
      if (forUser.permission === false) throw new ApiError('MISSING_PERMISSIONS');
      return;
    }
    const roleEntries = [guildId, ...access.guild.member.roles].map(entry).filter((e) => e !== undefined);
    if (roleEntries.length > 0) {
      if (!roleEntries.some((e) => e.permission === true)) throw new ApiError('MISSING_PERMISSIONS');
      return;
    }
    if (entry(access.channel.id)?.permission === false) throw new ApiError('MISSING_PERMISSIONS');
    const required = command.body.default_member_permissions;
    if (typeof required === 'string' && !access.guild.isOwner) {
      const bits = BigInt(required);
      if (!has(access.guild.permissions, PERMISSIONS.ADMINISTRATOR) && (access.guild.permissions & bits) !== bits)
        throw new ApiError('MISSING_PERMISSIONS');
    }
  }

  private async interactionPayload(input: {
    id: string;
    token: string;
    app: ApplicationRecord & { botUserId: string };
    user: UserRecord;
    access: ChannelAccess;
    body: InvokeBody;
    command?: CommandRow | undefined;
    message?: MessageRow | undefined;
    modalCustomId?: string | undefined;
  }): Promise<Record<string, unknown>> {
    const { id, token, app, user, access, body, command, message } = input;
    const guild = access.guild;
    const now = this.deps.clock.now();
    const botAccess = guild
      ? await this.deps.chat.access.channel(access.channel.id, app.botUserId, now).catch(() => undefined)
      : undefined;
    const payload: Record<string, unknown> = {
      id,
      application_id: app.id,
      type: body.type,
      token,
      version: 1,
      channel_id: access.channel.id,
      channel: channelView(access.channel),
      app_permissions: String(botAccess?.permissions ?? access.permissions),
      locale: user.locale ?? 'en-US',
      entitlements: [],
      authorizing_integration_owners: guild ? { '0': guild.guildId } : { '1': user.id },
      context: guild ? 0 : 1,
      attachment_size_limit: 25 * 1024 * 1024,
    };
    if (guild) {
      payload.guild_id = guild.guildId;
      payload.guild = { id: guild.guildId, locale: 'en-US', features: [] };
      payload.guild_locale = 'en-US';
      payload.member = { ...memberView(guild.member, user), permissions: String(access.permissions), flags: 0 };
    } else {
      payload.user = partialUser(user);
    }
    if (command) {
      const options = (body.data as { options?: Record<string, unknown>[] }).options;
      const data: Record<string, unknown> = { id: command.id, name: command.name, type: command.type };
      if (options) data.options = options;
      if (command.guild_id) data.guild_id = command.guild_id;
      const resolved = await this.resolved(options ?? [], access);
      if (resolved) data.resolved = resolved;
      payload.data = data;
    } else if (body.type === INTERACTION_TYPES.MESSAGE_COMPONENT) {
      payload.data = body.data;
      const [rendered] = message ? await this.deps.chat.messages.render([message], undefined) : [];
      payload.message = rendered;
    } else if (body.type === INTERACTION_TYPES.MODAL_SUBMIT) {
      payload.data = { custom_id: body.data.custom_id, components: body.data.components };
    }
    return payload;
  }

  /** `resolved` users, members, roles and channels named by user, role, mentionable and channel options. */
  private async resolved(
    options: readonly Record<string, unknown>[],
    access: ChannelAccess,
  ): Promise<Record<string, unknown> | undefined> {
    const flat: Record<string, unknown>[] = [];
    const walk = (list: readonly Record<string, unknown>[]) => {
      for (const o of list) {
        flat.push(o);
        if (Array.isArray(o.options)) walk(o.options as Record<string, unknown>[]);
      }
    };
    walk(options);
    const idsOf = (...types: number[]) =>
      flat.filter((o) => types.includes(o.type as number) && typeof o.value === 'string').map((o) => o.value as string);
    const userIds = idsOf(OPTION_TYPES.USER, OPTION_TYPES.MENTIONABLE);
    const roleIds = idsOf(OPTION_TYPES.ROLE, OPTION_TYPES.MENTIONABLE);
    const channelIds = idsOf(OPTION_TYPES.CHANNEL);
    if (userIds.length + roleIds.length + channelIds.length === 0) return undefined;
    const resolved: Record<string, Record<string, unknown>> = {};
    const users = await this.deps.chat.store.usersByIds(userIds);
    if (users.size > 0) {
      resolved.users = Object.fromEntries([...users.values()].map((u) => [u.id, partialUser(u)]));
      if (access.guild) {
        const members: Record<string, unknown> = {};
        for (const u of users.values()) {
          const bundle = await this.deps.chat.store.guildBundle(access.guild.guildId, u.id);
          if (bundle?.member) members[u.id] = memberView(bundle.member, u, { includeUser: false });
        }
        resolved.members = members;
      }
    }
    const roles = access.guild ? roleIds.flatMap((rid) => access.guild?.role(rid) ?? []) : [];
    if (roles.length > 0) resolved.roles = Object.fromEntries(roles.map((r) => [r.id, roleView(r)]));
    const channels: Record<string, unknown> = {};
    for (const cid of channelIds) {
      const channel = await this.deps.chat.store.channel(cid);
      if (channel && channel.guild_id === access.channel.guild_id)
        channels[cid] = { ...channelView(channel), permissions: String(access.permissions) };
    }
    if (Object.keys(channels).length > 0) resolved.channels = channels;
    return resolved;
  }

  /** The interaction a token names, checked against the path's id; unknown or expired → UNKNOWN_INTERACTION. */
  async byToken(token: string, id: string | undefined, now: number): Promise<InteractionRow> {
    if (!isInteractionToken(token) || token.length > 200) throw new ApiError('UNKNOWN_INTERACTION');
    const hash = digest(token);
    const row = await this.deps.store.interactionByToken(hash);
    if (!row || !constantTimeEqual(row.token_hash, hash)) throw new ApiError('UNKNOWN_INTERACTION');
    if (id !== undefined && row.id !== id) throw new ApiError('UNKNOWN_INTERACTION');
    if (row.expires_at.getTime() <= now) throw new ApiError('UNKNOWN_INTERACTION');
    return row;
  }

  /** `POST /interactions/{id}/{token}/callback`: the one initial response. */
  async callback(
    row: InteractionRow,
    body: { type: number; data?: unknown },
    now: number,
  ): Promise<Record<string, unknown> | undefined> {
    if (now - row.created_at.getTime() > INITIAL_RESPONSE_MS) throw new ApiError('UNKNOWN_INTERACTION');
    const allowed = ALLOWED_CALLBACKS[row.type] ?? [];
    if (!allowed.includes(body.type)) throw fieldError('type', 'INVALID_FORMAT', 'Not a response to this interaction');
    // Validate before claiming the one response, so a malformed answer can be corrected in time.
    const message = MESSAGE_CALLBACKS.has(body.type) ? validate(responseMessageSchema, body.data ?? {}) : undefined;
    const modal = body.type === CALLBACK_TYPES.MODAL ? validate(modalSchema, body.data ?? {}) : undefined;
    const choices =
      body.type === CALLBACK_TYPES.AUTOCOMPLETE_RESULT
        ? validate(z.object({ choices: z.array(z.record(z.string(), z.unknown())).max(25) }), body.data ?? {}).choices
        : undefined;
    if (!(await this.deps.store.markResponded(row.id, body.type, new Date(now))))
      throw new ApiError('INTERACTION_ALREADY_ACKNOWLEDGED');
    const app = await this.appOf(row);
    let resource: Record<string, unknown> | undefined;
    switch (body.type) {
      case CALLBACK_TYPES.CHANNEL_MESSAGE_WITH_SOURCE:
        resource = await this.postOriginal(row, app, message ?? {}, 0);
        break;
      case CALLBACK_TYPES.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE:
        resource = await this.postOriginal(row, app, { flags: message?.flags ?? 0 }, FLAG_LOADING);
        break;
      case CALLBACK_TYPES.UPDATE_MESSAGE:
        resource = await this.updateComponentMessage(row, message ?? {});
        break;
      case CALLBACK_TYPES.DEFERRED_UPDATE_MESSAGE:
        await this.deps.store.setOriginal(row.id, row.message_id, null);
        break;
      case CALLBACK_TYPES.MODAL:
        await this.deps.store.db.query('UPDATE interactions SET modal_custom_id = $2 WHERE id = $1', [
          row.id,
          modal?.custom_id,
        ]);
        await this.toInvoker(row, 'INTERACTION_MODAL_CREATE', {
          id: row.id,
          channel_id: row.channel_id,
          custom_id: modal?.custom_id,
          title: modal?.title,
          components: modal?.components,
          application: { id: app.id, name: app.name, icon: app.icon ?? null },
        });
        break;
      case CALLBACK_TYPES.AUTOCOMPLETE_RESULT:
        await this.toInvoker(row, 'APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE', { id: row.id, choices });
        break;
      default:
        break;
    }
    await this.toInvoker(row, 'INTERACTION_SUCCESS', { id: row.id });
    return resource
      ? { interaction: { id: row.id, type: row.type }, resource: { type: body.type, message: resource } }
      : { interaction: { id: row.id, type: row.type } };
  }

  /** A follow-up message (`POST /webhooks/{application_id}/{token}`). */
  async followUp(row: InteractionRow, data: unknown): Promise<Record<string, unknown>> {
    if (row.responded_at === null) throw new ApiError('UNKNOWN_INTERACTION');
    const app = await this.appOf(row);
    return this.createMessage(row, app, validate(responseMessageSchema, data ?? {}), 0, false);
  }

  /** `GET …/messages/@original` (or a follow-up's id). */
  async getMessage(row: InteractionRow, messageId: string): Promise<Record<string, unknown>> {
    if (messageId === '@original' && row.ephemeral_message) return row.ephemeral_message;
    const id = messageId === '@original' ? row.original_message_id : messageId;
    const message = id ? await this.deps.chat.messages.find(row.channel_id, id) : undefined;
    if (!message || !this.ownedBy(message, row)) throw new ApiError('UNKNOWN_MESSAGE');
    const [view] = await this.deps.chat.messages.render([message], undefined);
    return view as Record<string, unknown>;
  }

  async editMessage(row: InteractionRow, messageId: string, data: unknown): Promise<Record<string, unknown>> {
    const edit = validate(responseMessageSchema, data ?? {});
    if (messageId === '@original' && row.ephemeral_message) {
      const updated = {
        ...row.ephemeral_message,
        ...definedMembers({ content: edit.content ?? undefined, embeds: edit.embeds ?? undefined }),
        ...(edit.components ? { components: edit.components } : {}),
        flags: ((row.ephemeral_message.flags as number) & ~FLAG_LOADING) | FLAG_EPHEMERAL,
        edited_timestamp: new Date(this.deps.clock.now()).toISOString(),
      };
      await this.deps.store.setOriginal(row.id, null, updated);
      await this.toInvoker(row, 'MESSAGE_UPDATE', updated);
      return updated;
    }
    const id = messageId === '@original' ? row.original_message_id : messageId;
    let message = id ? await this.deps.chat.messages.find(row.channel_id, id) : undefined;
    if (!message || !this.ownedBy(message, row)) throw new ApiError('UNKNOWN_MESSAGE');
    const channel = await this.deps.chat.store.channel(row.channel_id);
    if (!channel) throw new ApiError('UNKNOWN_CHANNEL');
    if ((message.flags & FLAG_LOADING) !== 0) {
      // A deferred reply stops "thinking" at its first edit.
      await this.deps.store.db.query('UPDATE messages SET flags = flags & ~($2::integer) WHERE id = $1', [
        message.id,
        FLAG_LOADING,
      ]);
      message = { ...message, flags: message.flags & ~FLAG_LOADING };
    }
    return this.deps.chat.messages.edit(channel, message, {
      content: edit.content,
      embeds: edit.embeds,
      canMentionEveryone: false,
      ...(edit.components ? { extras: { components: edit.components } } : {}),
    });
  }

  async deleteMessage(row: InteractionRow, messageId: string): Promise<void> {
    if (messageId === '@original' && row.ephemeral_message) {
      await this.deps.store.setOriginal(row.id, null, null);
      await this.toInvoker(row, 'MESSAGE_DELETE', { id: row.ephemeral_message.id, channel_id: row.channel_id });
      return;
    }
    const id = messageId === '@original' ? row.original_message_id : messageId;
    const message = id ? await this.deps.chat.messages.find(row.channel_id, id) : undefined;
    if (!message || !this.ownedBy(message, row)) throw new ApiError('UNKNOWN_MESSAGE');
    const access = await this.deps.chat.access.channel(row.channel_id, row.user_id, this.deps.clock.now());
    await this.deps.store.db.query('DELETE FROM messages WHERE id = $1', [message.id]);
    await this.deps.chat.events.channel('MESSAGE_DELETE', access, { id: message.id });
  }

  private ownedBy(message: MessageRow, row: InteractionRow): boolean {
    return (
      (message.extras?.interaction_metadata as { id?: string } | undefined)?.id === row.id ||
      message.id === row.original_message_id ||
      message.id === row.message_id
    );
  }

  private async appOf(row: InteractionRow): Promise<ApplicationRecord & { botUserId: string }> {
    const app = await this.deps.apps.findById(row.application_id);
    if (!app?.botUserId) throw new ApiError('UNKNOWN_INTERACTION');
    return { ...app, botUserId: app.botUserId };
  }

  private async postOriginal(
    row: InteractionRow,
    app: ApplicationRecord & { botUserId: string },
    data: ResponseMessage,
    extraFlags: number,
  ): Promise<Record<string, unknown>> {
    const message = await this.createMessage(row, app, data, extraFlags, true);
    return message;
  }

  private async createMessage(
    row: InteractionRow,
    app: ApplicationRecord & { botUserId: string },
    data: ResponseMessage,
    extraFlags: number,
    original: boolean,
  ): Promise<Record<string, unknown>> {
    const bot = await this.deps.users.findById(app.botUserId);
    const invoker = await this.deps.users.findById(row.user_id);
    if (!bot || !invoker) throw new ApiError('UNKNOWN_INTERACTION');
    const metadata = await this.interactionMetadata(row, invoker);
    const extras: Record<string, unknown> = {
      application_id: app.id,
      interaction_metadata: metadata.interaction_metadata,
      interaction: metadata.interaction,
      ...(data.components ? { components: data.components } : {}),
    };
    const type = row.type === INTERACTION_TYPES.APPLICATION_COMMAND ? MESSAGE_TYPE_CHAT_INPUT_COMMAND : 0;
    const ephemeral = ((data.flags ?? 0) & FLAG_EPHEMERAL) !== 0;
    if (ephemeral) {
      const now = this.deps.clock.now();
      const message: Record<string, unknown> = {
        id: this.deps.ids.next(),
        channel_id: row.channel_id,
        author: partialUser(bot),
        webhook_id: app.id,
        type,
        flags: FLAG_EPHEMERAL | extraFlags,
        content: data.content ?? '',
        timestamp: new Date(now).toISOString(),
        edited_timestamp: null,
        pinned: false,
        mention_everyone: false,
        tts: false,
        mentions: [],
        mention_roles: [],
        embeds: data.embeds ?? [],
        attachments: [],
        stickers: [],
        components: [],
        ...extras,
      };
      if (original) await this.deps.store.setOriginal(row.id, null, message);
      await this.toInvoker(row, 'MESSAGE_CREATE', message);
      return message;
    }
    const channel = await this.deps.chat.store.channel(row.channel_id);
    if (!channel) throw new ApiError('UNKNOWN_CHANNEL');
    const created = await this.deps.chat.messages.create({
      channel,
      author: bot,
      webhook: { id: app.id, name: bot.username, avatar: bot.avatar },
      content: data.content,
      embeds: data.embeds,
      tts: data.tts,
      flags: data.flags,
      serverFlags: extraFlags,
      allowedMentions: data.allowed_mentions as never,
      canMentionEveryone: false,
      type,
      extras,
    });
    if (original) await this.deps.store.setOriginal(row.id, created.id as string, null);
    return created;
  }

  private async updateComponentMessage(row: InteractionRow, data: ResponseMessage): Promise<Record<string, unknown>> {
    if (!row.message_id) throw new ApiError('UNKNOWN_MESSAGE');
    await this.deps.store.setOriginal(row.id, row.message_id, null);
    const message = await this.deps.chat.messages.find(row.channel_id, row.message_id);
    const channel = await this.deps.chat.store.channel(row.channel_id);
    if (!message || !channel) throw new ApiError('UNKNOWN_MESSAGE');
    return this.deps.chat.messages.edit(channel, message, {
      content: data.content,
      embeds: data.embeds,
      canMentionEveryone: false,
      ...(data.components ? { extras: { components: data.components } } : {}),
    });
  }

  private async interactionMetadata(row: InteractionRow, invoker: UserRecord) {
    const command = row.command_name ?? undefined;
    const user = partialUser(invoker);
    return {
      interaction_metadata: {
        id: row.id,
        type: row.type,
        user,
        authorizing_integration_owners: row.guild_id ? { '0': row.guild_id } : { '1': row.user_id },
        ...(row.message_id ? { interacted_message_id: row.message_id } : {}),
        ...(command ? { name: command } : {}),
      },
      interaction: { id: row.id, type: row.type, name: command ?? '', user },
    };
  }

  private toInvoker(row: InteractionRow, event: string, payload: Record<string, unknown>): Promise<void> {
    return this.deps.dispatcher.dispatch(event, payload, { kind: 'users', userIds: [row.user_id] });
  }
}

const MESSAGE_CALLBACKS: ReadonlySet<number> = new Set([
  CALLBACK_TYPES.CHANNEL_MESSAGE_WITH_SOURCE,
  CALLBACK_TYPES.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE,
  CALLBACK_TYPES.UPDATE_MESSAGE,
]);

/** Which initial responses each interaction type takes (Discord's table). */
const ALLOWED_CALLBACKS: Record<number, number[]> = {
  [INTERACTION_TYPES.APPLICATION_COMMAND]: [4, 5, 9],
  [INTERACTION_TYPES.MESSAGE_COMPONENT]: [4, 5, 6, 7, 9],
  [INTERACTION_TYPES.AUTOCOMPLETE]: [8],
  [INTERACTION_TYPES.MODAL_SUBMIT]: [4, 5, 6, 7],
};

function definedMembers(object: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
}

export { COMMAND_TYPES };
