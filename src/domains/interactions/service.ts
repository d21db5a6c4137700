import { z } from 'zod';
import { ApiError, type FieldError, fieldError, formError } from '../../http/errors.ts';
import { validate } from '../../http/validation.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import { partialUser } from '../../identity/user-record.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { constantTimeEqual, digest, randomBase64Url } from '../../platform/crypto/tokens.ts';
import type { Logger } from '../../platform/log.ts';
import type { ApplicationRecord, ApplicationsRepository } from '../applications/applications-repository.ts';
import { EndpointFailure, type InteractionsEndpoint } from '../applications/interactions-endpoint.ts';
import {
  type AttachmentRef,
  type AttachmentService,
  checkAttachmentPairing,
} from '../attachments/attachment-service.ts';
import type { AttachmentView } from '../attachments/attachment-view.ts';
import type { StagedFile } from '../attachments/streamed-multipart.ts';
import { type ChannelAccess, GuildContext } from '../chat/access.ts';
import { attachmentRefSchema, embedSchema, MAX_CONTENT_LENGTH } from '../chat/message-body.ts';
import type { ChatModule } from '../chat/module.ts';
import { has, PERMISSIONS, threadPermissions } from '../chat/permissions.ts';
import { isThread, type MessageRow, type RoleRow } from '../chat/rows.ts';
import { threadView } from '../chat/thread-views.ts';
import { channelView, type MessageView, memberView } from '../chat/views.ts';
import type { Dispatcher, GatewayEvent, GatewayEvents } from '../events/dispatch.ts';
import { mayUseDmCommand, mayUseGuildCommand } from './command-permissions.ts';
import { COMMAND_TYPES, type CommandRow, OPTION_TYPES } from './commands.ts';
import { findComponent, type Modal, messageComponentsSchema, modalSchema } from './components.ts';
import {
  type CallbackResponseView,
  type CommandDataView,
  type InteractionModalView,
  type InteractionView,
  type ResolvedChannelView,
  type ResolvedMemberView,
  type ResolvedView,
  resolvedMember,
  resolvedRole,
} from './interaction-views.ts';
import { type CheckedOption, checkInvocationOptions, type SentOption } from './option-values.ts';
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
const MESSAGE_TYPE_CONTEXT_MENU_COMMAND = 23;
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

const commandOption: z.ZodType<SentOption> = z.lazy(() =>
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

/**
 * `data.attachments` of a command with attachment options: each entry names an inline file (`files[n]` → id `n`)
 * or a relay upload (`upload_filename`, or Discord's `uploaded_filename`), and an attachment option's value is
 * an entry's id (docs/bots.md#attachment-options).
 */
const interactionAttachment = z
  .object({
    id: z
      .union([z.string().regex(/^\d{1,20}$/), z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)])
      .transform((id) => (typeof id === 'number' ? String(id) : id.replace(/^0+(?=\d)/, ''))),
    filename: z.string().max(1024).optional(),
    description: z.string().max(1024).nullish(),
    upload_filename: z.string().max(1024).optional(),
    uploaded_filename: z.string().max(1024).optional(),
  })
  .strict()
  .transform(({ uploaded_filename, ...ref }) =>
    ref.upload_filename === undefined && uploaded_filename !== undefined
      ? { ...ref, upload_filename: uploaded_filename }
      : ref,
  );

/** What every invocation carries: the app, where it was invoked, and the invoking client's session and nonce. */
const invocationEnvelope = {
  application_id: snowflake,
  guild_id: snowflake.nullish(),
  channel_id: snowflake,
  session_id: z.string().max(64).nullish(),
  nonce: z.string().max(64).nullish(),
};

/** The command named by a slash-command invocation and by an autocomplete request alike. */
const commandData = z.object({
  id: snowflake,
  name: z.string().max(32),
  type: z.number().int().min(1).max(3).optional(),
  options: z.array(commandOption).max(25).optional(),
});

/** The body a person's client sends to `POST /interactions`. */
export const invokeSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal(INTERACTION_TYPES.APPLICATION_COMMAND),
    ...invocationEnvelope,
    data: commandData.extend({
      version: z.string().max(20).optional(),
      target_id: snowflake.optional(),
      attachments: z.array(interactionAttachment).max(10).optional(),
    }),
  }),
  z.object({
    type: z.literal(INTERACTION_TYPES.AUTOCOMPLETE),
    ...invocationEnvelope,
    data: commandData,
  }),
  z.object({
    type: z.literal(INTERACTION_TYPES.MESSAGE_COMPONENT),
    ...invocationEnvelope,
    message_id: snowflake,
    data: z.object({
      component_type: z.number().int().min(2).max(8),
      custom_id: z.string().min(1).max(100),
      values: z.array(z.string().max(100)).max(25).optional(),
    }),
  }),
  z.object({
    type: z.literal(INTERACTION_TYPES.MODAL_SUBMIT),
    ...invocationEnvelope,
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
  // As a message's: entries pair with the multipart body's `files[n]` (docs/bots.md#files-in-responses).
  attachments: z.array(attachmentRefSchema).max(10).nullish(),
});
export type ResponseMessage = z.infer<typeof responseMessageSchema>;

/** `data` of an autocomplete result (callback 8): up to 25 of Discord's command option choices. */
export const autocompleteResultSchema = z.object({
  choices: z
    .array(
      z
        .object({
          name: z.string().min(1).max(100),
          name_localizations: z.record(z.string().max(10), z.string().min(1).max(100)).nullish(),
          value: z.union([z.string().max(100), z.number()]),
        })
        .strict(),
    )
    .max(25),
});

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
  endpoint: Pick<InteractionsEndpoint, 'post'>;
  /** Stores the files of attachment options (as message attachments are stored), and deletes those messages lost. */
  attachments: Pick<AttachmentService, 'resolve' | 'discard' | 'deleteDiscarded'>;
  log: Logger;
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
  /** Deliveries to interactions endpoints still running (shutdown waits for them). */
  private readonly deliveries = new Set<Promise<void>>();

  constructor(private readonly deps: InteractionsDeps) {}

  async invoke(
    user: UserRecord,
    body: InvokeBody,
    now: number,
    files: ReadonlyMap<string, StagedFile> = new Map(),
  ): Promise<void> {
    const { app, access, command, message } = await this.authorise(user, body, now);
    let resolved: ResolvedView | undefined;
    const chatInput =
      command?.type === COMMAND_TYPES.CHAT_INPUT &&
      (body.type === INTERACTION_TYPES.APPLICATION_COMMAND || body.type === INTERACTION_TYPES.AUTOCOMPLETE);
    if (chatInput) {
      const autocomplete = body.type === INTERACTION_TYPES.AUTOCOMPLETE;
      const leaves = checkInvocationOptions(command.body, body.data.options, autocomplete);
      const uploads =
        body.type === INTERACTION_TYPES.APPLICATION_COMMAND ? (body.data.attachments ?? []) : ([] as AttachmentRef[]);
      resolved = await this.resolve(leaves, access, user, now, autocomplete ? undefined : { refs: uploads, files });
    } else if (files.size > 0 || (body.type === INTERACTION_TYPES.APPLICATION_COMMAND && body.data.attachments?.length))
      throw fieldError('data.attachments', 'INVALID_FORMAT', 'Only attachment options carry files');
    if (command && command.type !== COMMAND_TYPES.CHAT_INPUT && body.type === INTERACTION_TYPES.APPLICATION_COMMAND)
      resolved = await this.resolveTarget(command, body.data, access, now);
    const id = this.deps.ids.next();
    const token = INTERACTION_TOKEN_PREFIX + randomBase64Url(48);
    const guildId = access.channel.guild_id;
    let modalCustomId: string | undefined;
    if (body.type === INTERACTION_TYPES.MODAL_SUBMIT) modalCustomId = body.data.custom_id;
    const row: InteractionRow = {
      id,
      application_id: app.id,
      token_hash: digest(token),
      type: body.type,
      user_id: user.id,
      channel_id: access.channel.id,
      guild_id: guildId,
      message_id: message?.id ?? null,
      command_name: command?.name ?? null,
      command_type: command?.type ?? null,
      target_id:
        resolved &&
        command &&
        command.type !== COMMAND_TYPES.CHAT_INPUT &&
        body.type === INTERACTION_TYPES.APPLICATION_COMMAND
          ? (body.data.target_id ?? null)
          : null,
      created_at: new Date(now),
      expires_at: new Date(now + TOKEN_LIFETIME_MS),
      responded_at: null,
      response_type: null,
      original_message_id: null,
      ephemeral_message: null,
      modal_custom_id: null,
    };
    await this.deps.store.createInteraction(row);
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
      resolved,
    });
    if (app.interactionsEndpointUrl) {
      // Over HTTP instead of the gateway; the person's request does not wait for the application (Discord's 204).
      const delivery = this.deliver(row, payload, app.interactionsEndpointUrl).finally(() =>
        this.deliveries.delete(delivery),
      );
      this.deliveries.add(delivery);
    } else
      await this.deps.dispatcher.dispatch('INTERACTION_CREATE', payload, { kind: 'users', userIds: [app.botUserId] });
    // The person's client learns the interaction's id for its nonce (as Discord's client does).
    await this.deps.dispatcher.dispatch(
      'INTERACTION_CREATE',
      { id, nonce: body.nonce ?? null },
      { kind: 'users', userIds: [user.id] },
    );
  }

  /**
   * POSTs the interaction, signed, to the application's endpoint; its answer is the initial response, with
   * the callback route's rules. An empty 2xx answer leaves the interaction to the callback route (3 s, as on
   * the gateway). No answer within 3 s, a non-2xx status, an answer over 256 KiB or one that is not a valid
   * response fails the interaction: its token dies and nothing is posted, so the person sees what a gateway
   * bot that never answers leaves them with (no `INTERACTION_SUCCESS`).
   */
  private async deliver(row: InteractionRow, payload: InteractionView, url: string): Promise<void> {
    let failure: string | undefined;
    try {
      const response = await this.deps.endpoint.post(row.application_id, new URL(url), JSON.stringify(payload));
      // The answer came within the endpoint's window, so it counts as in time.
      const at = Math.min(this.deps.clock.now(), row.created_at.getTime() + INITIAL_RESPONSE_MS);
      if (response.status < 200 || response.status > 299) failure = `status ${response.status}`;
      else if (response.text.trim().length > 0) {
        let answer: unknown;
        try {
          answer = JSON.parse(response.text);
        } catch {
          failure = 'not_json';
        }
        if (!failure) await this.callback(row, validate(callbackSchema, answer), at);
      }
    } catch (error) {
      failure =
        error instanceof EndpointFailure ? error.reason : error instanceof ApiError ? error.code : 'internal_error';
      if (!(error instanceof EndpointFailure) && !(error instanceof ApiError))
        this.deps.log.error('interaction delivery failed', { interaction_id: row.id, error: String(error) });
    }
    if (failure === undefined) return;
    await this.deps.store.fail(row.id, new Date(this.deps.clock.now())).catch(() => {});
    this.deps.log.warn('interactions endpoint failed', {
      application_id: row.application_id,
      interaction_id: row.id,
      reason: failure,
    });
  }

  /** Resolves when every endpoint delivery started so far has finished (shutdown). */
  async settled(): Promise<void> {
    while (this.deliveries.size > 0) await Promise.allSettled([...this.deliveries]);
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
      if (body.data.type !== undefined && body.data.type !== command.type)
        throw fieldError('data.type', 'INVALID_FORMAT', 'Not the command’s type');
      if (command.type !== COMMAND_TYPES.CHAT_INPUT) {
        // User and message commands (docs/bots.md#user-and-message-commands): a target, no options, no autocomplete.
        if (body.type === INTERACTION_TYPES.AUTOCOMPLETE)
          throw fieldError('type', 'INVALID_FORMAT', 'Only chat-input commands autocomplete');
        if (body.data.options?.length) throw fieldError('data.options', 'INVALID_FORMAT', 'The command has no options');
        if (body.data.target_id === undefined)
          throw fieldError('data.target_id', 'BASE_TYPE_REQUIRED', 'This field is required');
      } else if (body.type === INTERACTION_TYPES.APPLICATION_COMMAND && body.data.target_id !== undefined)
        throw fieldError('data.target_id', 'INVALID_FORMAT', 'Only user and message commands have a target');
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
      if (!mayUseDmCommand(command)) throw new ApiError('MISSING_PERMISSIONS');
      return;
    }
    const overrides =
      (await this.deps.store.commandPermissions(command.application_id, guildId, command.id)) ??
      (await this.deps.store.commandPermissions(command.application_id, guildId, command.application_id)) ??
      [];
    const allowed = mayUseGuildCommand(command, overrides, {
      userId: user.id,
      guildId,
      roleIds: access.guild.member.roles,
      channelId: access.channel.id,
      permissions: access.guild.permissions,
      isOwner: access.guild.isOwner,
    });
    if (!allowed) throw new ApiError('MISSING_PERMISSIONS');
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
    resolved?: ResolvedView | undefined;
  }): Promise<InteractionView> {
    const { id, token, app, user, access, body, command, message, resolved } = input;
    const guild = access.guild;
    const now = this.deps.clock.now();
    const botAccess = guild
      ? await this.deps.chat.access.channel(access.channel.id, app.botUserId, now).catch(() => undefined)
      : undefined;
    const payload: InteractionView = {
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
      ...(guild
        ? {
            guild_id: guild.guildId,
            guild: { id: guild.guildId, locale: 'en-US', features: [] },
            guild_locale: 'en-US',
            member: { ...memberView(guild.member, user), permissions: String(access.permissions), flags: 0 },
          }
        : { user: partialUser(user) }),
    };
    if (command) {
      const invoked =
        body.type === INTERACTION_TYPES.APPLICATION_COMMAND || body.type === INTERACTION_TYPES.AUTOCOMPLETE;
      const options = invoked ? body.data.options : undefined;
      const data: CommandDataView = { id: command.id, name: command.name, type: command.type };
      if (options) data.options = options;
      const targetId = body.type === INTERACTION_TYPES.APPLICATION_COMMAND ? body.data.target_id : undefined;
      if (command.type !== COMMAND_TYPES.CHAT_INPUT && targetId !== undefined) data.target_id = targetId;
      if (command.guild_id) data.guild_id = command.guild_id;
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

  /**
   * `resolved` as Discord sends it (discord-api-types' APIInteractionDataResolved) for the user, role, mentionable,
   * channel and attachment options of an invocation, checked first: a user must exist, a role be the guild's, a
   * channel be one the person sees in this guild (of the option's `channel_types`, if set); attachment options
   * need ATTACH_FILES and name an entry of `data.attachments`, whose file is stored only once all else passed
   * (its option's value becomes the stored attachment's id). Members carry their permissions in the invoked
   * channel, channels the person's permissions in them.
   */
  private async resolve(
    leaves: readonly CheckedOption[],
    access: ChannelAccess,
    user: UserRecord,
    now: number,
    uploads: { refs: AttachmentRef[]; files: ReadonlyMap<string, StagedFile> } | undefined,
  ): Promise<ResolvedView | undefined> {
    const errors: FieldError[] = [];
    const guild = access.guild;
    const idOf = (leaf: CheckedOption) =>
      leaf.sent.focused !== true && typeof leaf.sent.value === 'string' ? leaf.sent.value : undefined;
    const userIds = new Set<string>();
    const roles = new Map<string, RoleRow>();
    const channels: Record<string, ResolvedChannelView> = {};
    const wanted = leaves.filter(
      (l) => l.definition.type === OPTION_TYPES.USER || l.definition.type === OPTION_TYPES.MENTIONABLE,
    );
    const known = await this.deps.chat.store.usersByIds(wanted.flatMap((l) => idOf(l) ?? []));
    for (const leaf of leaves) {
      const value = idOf(leaf);
      if (value === undefined) continue;
      const type = leaf.definition.type;
      if (type === OPTION_TYPES.USER || type === OPTION_TYPES.MENTIONABLE) {
        if (known.has(value)) {
          userIds.add(value);
          continue;
        }
        const role = type === OPTION_TYPES.MENTIONABLE ? guild?.role(value) : undefined;
        if (role) roles.set(role.id, role);
        else errors.push({ path: `${leaf.path}.value`, code: 'INVALID_FORMAT', message: 'Unknown user or role' });
      } else if (type === OPTION_TYPES.ROLE) {
        const role = guild?.role(value);
        if (role) roles.set(role.id, role);
        else errors.push({ path: `${leaf.path}.value`, code: 'INVALID_FORMAT', message: 'Unknown role' });
      } else if (type === OPTION_TYPES.CHANNEL) {
        const view = await this.resolvedChannel(value, access, user, now);
        const types = leaf.definition.channel_types;
        if (!view || (types?.length && !types.includes(view.type)))
          errors.push({ path: `${leaf.path}.value`, code: 'INVALID_FORMAT', message: 'Unknown channel' });
        else channels[value] = view;
      }
    }
    const attachmentLeaves = leaves.filter((l) => l.definition.type === OPTION_TYPES.ATTACHMENT);
    const refs = uploads?.refs ?? [];
    if (uploads && (attachmentLeaves.length > 0 || refs.length > 0 || uploads.files.size > 0)) {
      const named = new Set(attachmentLeaves.map((l) => String(l.sent.value)));
      for (const leaf of attachmentLeaves)
        if (!refs.some((r) => r.id === String(leaf.sent.value)))
          errors.push({
            path: `${leaf.path}.value`,
            code: 'INVALID_FORMAT',
            message: 'No such entry in data.attachments',
          });
      if (attachmentLeaves.length === 0 && uploads.files.size > 0)
        errors.push({
          path: 'data.attachments',
          code: 'INVALID_FORMAT',
          message: 'Only attachment options carry files',
        });
      refs.forEach((ref, index) => {
        if (!named.has(ref.id))
          errors.push({ path: `data.attachments.${index}.id`, code: 'INVALID_FORMAT', message: 'No option names it' });
      });
    }
    if (errors.length > 0) throw formError(errors);
    if (attachmentLeaves.length > 0 && guild && !has(access.permissions, PERMISSIONS.ATTACH_FILES))
      throw new ApiError('MISSING_PERMISSIONS');

    const resolved: ResolvedView = {};
    if (userIds.size > 0) {
      const users = [...userIds].flatMap((uid) => known.get(uid) ?? []);
      resolved.users = Object.fromEntries(users.map((u) => [u.id, partialUser(u)]));
      const members = await this.resolvedMembers(users, access, now);
      if (members) resolved.members = members;
    }
    if (roles.size > 0) resolved.roles = Object.fromEntries([...roles.values()].map((r) => [r.id, resolvedRole(r)]));
    if (Object.keys(channels).length > 0) resolved.channels = channels;
    if (uploads && attachmentLeaves.length > 0) {
      const stored = await this.deps.attachments.resolve(user.id, access.channel.id, refs, uploads.files);
      const byRef = new Map(refs.map((ref, index) => [ref.id, stored[index]]));
      const attachments: NonNullable<ResolvedView['attachments']> = {};
      for (const leaf of attachmentLeaves) {
        const attachment = byRef.get(String(leaf.sent.value));
        if (!attachment) continue;
        leaf.sent.value = String(attachment.id);
        attachments[String(attachment.id)] = attachment;
      }
      resolved.attachments = attachments;
    }
    return Object.keys(resolved).length > 0 ? resolved : undefined;
  }

  /** Members (discord-api-types' APIInteractionDataResolvedGuildMember) with their permissions in the channel. */
  private async resolvedMembers(
    users: readonly UserRecord[],
    access: ChannelAccess,
    now: number,
  ): Promise<Record<string, ResolvedMemberView> | undefined> {
    const guild = access.guild;
    if (!guild) return undefined;
    const members: Record<string, ResolvedMemberView> = {};
    const base = access.thread?.parent ?? access.channel;
    for (const u of users) {
      const bundle = await this.deps.chat.store.guildBundle(guild.guildId, u.id);
      if (!bundle?.member) continue;
      const context = new GuildContext({ ...bundle, member: bundle.member }, u.id, now);
      const inBase = context.channelPermissions(base);
      const visible = has(inBase, PERMISSIONS.VIEW_CHANNEL);
      const permissions = !visible ? 0n : access.thread ? threadPermissions(inBase) : inBase;
      members[u.id] = resolvedMember(bundle.member, permissions);
    }
    return Object.keys(members).length > 0 ? members : undefined;
  }

  /**
   * The target of a user or message command, resolved as discord-api-types' APIUserInteractionDataResolved
   * (`users`, and `members` when the user is in the guild) or APIMessageInteractionDataResolved (`messages`, the
   * message as the channel's message list shows it). A user must exist; a message must be in the channel.
   */
  private async resolveTarget(
    command: CommandRow,
    data: { target_id?: string | undefined },
    access: ChannelAccess,
    now: number,
  ): Promise<ResolvedView> {
    const targetId = data.target_id ?? '';
    if (command.type === COMMAND_TYPES.USER) {
      const target = (await this.deps.chat.store.usersByIds([targetId])).get(targetId);
      if (!target) throw new ApiError('UNKNOWN_USER');
      const members = await this.resolvedMembers([target], access, now);
      return { users: { [target.id]: partialUser(target) }, ...(members ? { members } : {}) };
    }
    if (command.type === COMMAND_TYPES.MESSAGE) {
      const message = await this.deps.chat.messages.find(access.channel.id, targetId);
      if (!message) throw new ApiError('UNKNOWN_MESSAGE');
      const [rendered] = await this.deps.chat.messages.render([message], undefined);
      // One message in, one view out: render never drops a message it is given.
      if (!rendered) throw new ApiError('UNKNOWN_MESSAGE');
      return { messages: { [message.id]: rendered } };
    }
    throw new ApiError('UNKNOWN_APPLICATION_COMMAND');
  }

  /** A channel option's channel as Discord resolves it, or undefined when the person cannot name it here. */
  private async resolvedChannel(
    channelId: string,
    access: ChannelAccess,
    user: UserRecord,
    now: number,
  ): Promise<ResolvedChannelView | undefined> {
    if (!access.guild) {
      // In a DM the only channel there is to name is the DM itself.
      if (channelId !== access.channel.id) return undefined;
      return {
        id: access.channel.id,
        name: access.channel.name ?? '',
        type: access.channel.type,
        permissions: String(access.permissions),
      };
    }
    const target = await this.deps.chat.access.channel(channelId, user.id, now).catch(() => undefined);
    if (!target || target.channel.guild_id !== access.guild.guildId) return undefined;
    const view: ResolvedChannelView = {
      id: target.channel.id,
      name: target.channel.name,
      type: target.channel.type,
      permissions: String(target.permissions),
    };
    if (target.thread && isThread(target.channel)) {
      const thread = threadView(target.thread.row);
      view.parent_id = thread.parent_id;
      view.thread_metadata = thread.thread_metadata;
    }
    return view;
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
    files: ReadonlyMap<string, StagedFile> = new Map(),
  ): Promise<CallbackResponseView> {
    if (now - row.created_at.getTime() > INITIAL_RESPONSE_MS) throw new ApiError('UNKNOWN_INTERACTION');
    const allowed = ALLOWED_CALLBACKS[row.type] ?? [];
    if (!allowed.includes(body.type)) throw fieldError('type', 'INVALID_FORMAT', 'Not a response to this interaction');
    // Validate before claiming the one response, so a malformed answer can be corrected in time.
    const message = MESSAGE_CALLBACKS.has(body.type) ? validate(responseMessageSchema, body.data ?? {}) : undefined;
    const modal = body.type === CALLBACK_TYPES.MODAL ? validate(modalSchema, body.data ?? {}) : undefined;
    const choices =
      body.type === CALLBACK_TYPES.AUTOCOMPLETE_RESULT
        ? validate(autocompleteResultSchema, body.data ?? {}).choices
        : undefined;
    // Files ride only on a reply or an update, and must pair with its entries; an update may keep the message's own.
    const updated =
      body.type === CALLBACK_TYPES.UPDATE_MESSAGE && row.message_id
        ? await this.deps.chat.messages.find(row.channel_id, row.message_id)
        : undefined;
    if (message?.attachments || files.size > 0) {
      const replying = body.type === CALLBACK_TYPES.CHANNEL_MESSAGE_WITH_SOURCE || updated !== undefined;
      checkAttachmentPairing(replying ? (message?.attachments ?? []) : [], files, attachmentIds(updated));
    }
    if (!(await this.deps.store.markResponded(row.id, body.type, new Date(now))))
      throw new ApiError('INTERACTION_ALREADY_ACKNOWLEDGED');
    const app = await this.appOf(row);
    let resource: MessageView | undefined;
    switch (body.type) {
      case CALLBACK_TYPES.CHANNEL_MESSAGE_WITH_SOURCE:
        resource = await this.postOriginal(row, app, message ?? {}, 0, files);
        break;
      case CALLBACK_TYPES.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE:
        resource = await this.postOriginal(row, app, { flags: message?.flags ?? 0 }, FLAG_LOADING);
        break;
      case CALLBACK_TYPES.UPDATE_MESSAGE:
        resource = await this.updateComponentMessage(row, message ?? {}, files);
        break;
      case CALLBACK_TYPES.DEFERRED_UPDATE_MESSAGE:
        await this.deps.store.setOriginal(row.id, row.message_id, null);
        break;
      case CALLBACK_TYPES.MODAL:
        // Always set here: the MODAL type is validated as a modal above.
        if (modal) await this.showModal(row, app, modal);
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

  /** A modal as the answer: its custom id is what the person's submit must name (`modalShown`). */
  private async showModal(row: InteractionRow, app: ApplicationRecord, modal: Modal): Promise<void> {
    await this.deps.store.db.query('UPDATE interactions SET modal_custom_id = $2 WHERE id = $1', [
      row.id,
      modal.custom_id,
    ]);
    const view: InteractionModalView = {
      id: row.id,
      channel_id: row.channel_id,
      custom_id: modal.custom_id,
      title: modal.title,
      components: modal.components,
      application: { id: app.id, name: app.name, icon: app.icon ?? null },
    };
    await this.toInvoker(row, 'INTERACTION_MODAL_CREATE', view);
  }

  /** A follow-up message (`POST /webhooks/{application_id}/{token}`). */
  async followUp(
    row: InteractionRow,
    data: unknown,
    files: ReadonlyMap<string, StagedFile> = new Map(),
  ): Promise<MessageView> {
    if (row.responded_at === null) throw new ApiError('UNKNOWN_INTERACTION');
    const app = await this.appOf(row);
    return this.createMessage(row, app, validate(responseMessageSchema, data ?? {}), 0, false, files);
  }

  /** `GET …/messages/@original` (or a follow-up's id). */
  async getMessage(row: InteractionRow, messageId: string): Promise<MessageView> {
    if (messageId === '@original' && row.ephemeral_message) return row.ephemeral_message;
    const id = messageId === '@original' ? row.original_message_id : messageId;
    const message = id ? await this.deps.chat.messages.find(row.channel_id, id) : undefined;
    if (!message || !this.ownedBy(message, row)) throw new ApiError('UNKNOWN_MESSAGE');
    const [view] = await this.deps.chat.messages.render([message], undefined);
    // One message in, one view out: render never drops a message it is given.
    if (!view) throw new ApiError('UNKNOWN_MESSAGE');
    return view;
  }

  async editMessage(
    row: InteractionRow,
    messageId: string,
    data: unknown,
    files: ReadonlyMap<string, StagedFile> = new Map(),
  ): Promise<MessageView> {
    const edit = validate(responseMessageSchema, data ?? {});
    if (messageId === '@original' && row.ephemeral_message) {
      const attachments = await this.storeFiles(row, edit, files, row.ephemeral_message.attachments);
      const updated = {
        ...row.ephemeral_message,
        ...definedMembers({ content: edit.content ?? undefined, embeds: edit.embeds ?? undefined }),
        ...(edit.components ? { components: edit.components } : {}),
        ...(attachments ? { attachments } : {}),
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
    const attachments = await this.storeFiles(row, edit, files, message.attachments);
    const edited = await this.deps.chat.messages.edit(channel, message, {
      content: edit.content,
      embeds: edit.embeds,
      canMentionEveryone: false,
      ...(edit.components ? { extras: { components: edit.components } } : {}),
      ...(attachments ? { attachments } : {}),
    });
    await this.discardDropped(message, edited);
    return edited;
  }

  /** The files an edit dropped go, as for a user's edit (docs/media.md, Attachments). */
  private async discardDropped(before: MessageRow, after: MessageView): Promise<void> {
    await this.deps.attachments.discard(
      before.channel_id,
      before.id,
      this.deps.chat.messages.droppedAttachments(before, after),
    );
  }

  /**
   * The attachments a response names, its new files stored (docs/bots.md#files-in-responses); `undefined` when it
   * names none and brings none, so an edit keeps what the message had. Relay uploads are claimed as the bot's.
   */
  private async storeFiles(
    row: InteractionRow,
    data: ResponseMessage,
    files: ReadonlyMap<string, StagedFile>,
    existing: readonly AttachmentView[] = [],
  ): Promise<AttachmentView[] | undefined> {
    if (!data.attachments && files.size === 0) return undefined;
    const app = await this.appOf(row);
    return this.deps.attachments.resolve(app.botUserId, row.channel_id, data.attachments ?? [], files, existing);
  }

  async deleteMessage(row: InteractionRow, messageId: string): Promise<void> {
    if (messageId === '@original' && row.ephemeral_message) {
      await this.deps.store.setOriginal(row.id, null, null);
      await this.toInvoker(row, 'MESSAGE_DELETE', {
        id: row.ephemeral_message.id as string,
        channel_id: row.channel_id,
      });
      return;
    }
    const id = messageId === '@original' ? row.original_message_id : messageId;
    const message = id ? await this.deps.chat.messages.find(row.channel_id, id) : undefined;
    if (!message || !this.ownedBy(message, row)) throw new ApiError('UNKNOWN_MESSAGE');
    const access = await this.deps.chat.access.channel(row.channel_id, row.user_id, this.deps.clock.now());
    await this.deps.store.db.query('DELETE FROM messages WHERE id = $1', [message.id]);
    await this.deps.attachments.deleteDiscarded([message.id]);
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
    files: ReadonlyMap<string, StagedFile> = new Map(),
  ): Promise<MessageView> {
    return this.createMessage(row, app, data, extraFlags, true, files);
  }

  private async createMessage(
    row: InteractionRow,
    app: ApplicationRecord & { botUserId: string },
    data: ResponseMessage,
    extraFlags: number,
    original: boolean,
    files: ReadonlyMap<string, StagedFile> = new Map(),
  ): Promise<MessageView> {
    const bot = await this.deps.users.findById(app.botUserId);
    const invoker = await this.deps.users.findById(row.user_id);
    if (!bot || !invoker) throw new ApiError('UNKNOWN_INTERACTION');
    const metadata = await this.interactionMetadata(row, invoker);
    const extras = {
      application_id: app.id,
      interaction_metadata: metadata.interaction_metadata,
      interaction: metadata.interaction,
      ...(data.components ? { components: data.components } : {}),
    };
    const contextMenu = row.command_type === COMMAND_TYPES.USER || row.command_type === COMMAND_TYPES.MESSAGE;
    const type =
      row.type !== INTERACTION_TYPES.APPLICATION_COMMAND
        ? 0
        : contextMenu
          ? MESSAGE_TYPE_CONTEXT_MENU_COMMAND
          : MESSAGE_TYPE_CHAT_INPUT_COMMAND;
    const ephemeral = ((data.flags ?? 0) & FLAG_EPHEMERAL) !== 0;
    const attachments = (await this.storeFiles(row, data, files)) ?? [];
    if (ephemeral) {
      const now = this.deps.clock.now();
      const message: MessageView = {
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
        attachments,
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
    // The original's id is recorded before the message is announced: whoever sees its MESSAGE_CREATE may at once
    // edit `@original` through the interaction webhook.
    const messageId = original ? this.deps.ids.next() : undefined;
    if (messageId) await this.deps.store.setOriginal(row.id, messageId, null);
    const created = await this.deps.chat.messages.create({
      id: messageId,
      channel,
      author: bot,
      webhook: { id: app.id, name: bot.username, avatar: bot.avatar },
      content: data.content,
      embeds: data.embeds,
      attachments,
      tts: data.tts,
      flags: data.flags,
      serverFlags: extraFlags,
      allowedMentions: data.allowed_mentions as never,
      canMentionEveryone: false,
      type,
      extras,
    });
    return created;
  }

  private async updateComponentMessage(
    row: InteractionRow,
    data: ResponseMessage,
    files: ReadonlyMap<string, StagedFile>,
  ): Promise<MessageView> {
    if (!row.message_id) throw new ApiError('UNKNOWN_MESSAGE');
    await this.deps.store.setOriginal(row.id, row.message_id, null);
    const message = await this.deps.chat.messages.find(row.channel_id, row.message_id);
    const channel = await this.deps.chat.store.channel(row.channel_id);
    if (!message || !channel) throw new ApiError('UNKNOWN_MESSAGE');
    const attachments = await this.storeFiles(row, data, files, message.attachments);
    const edited = await this.deps.chat.messages.edit(channel, message, {
      content: data.content,
      embeds: data.embeds,
      canMentionEveryone: false,
      ...(data.components ? { extras: { components: data.components } } : {}),
      ...(attachments ? { attachments } : {}),
    });
    await this.discardDropped(message, edited);
    return edited;
  }

  private async interactionMetadata(row: InteractionRow, invoker: UserRecord) {
    const command = row.command_name ?? undefined;
    const user = partialUser(invoker);
    // A user or message command's responses name its target (discord-api-types' APIApplicationCommandInteractionMetadata).
    const target: Record<string, unknown> = {};
    if (row.target_id && row.command_type === COMMAND_TYPES.MESSAGE) target.target_message_id = row.target_id;
    if (row.target_id && row.command_type === COMMAND_TYPES.USER) {
      const targetUser = await this.deps.users.findById(row.target_id);
      if (targetUser) target.target_user = partialUser(targetUser);
    }
    return {
      interaction_metadata: {
        id: row.id,
        type: row.type,
        user,
        authorizing_integration_owners: row.guild_id ? { '0': row.guild_id } : { '1': row.user_id },
        ...(row.message_id ? { interacted_message_id: row.message_id } : {}),
        ...(command ? { name: command } : {}),
        ...target,
      },
      interaction: { id: row.id, type: row.type, name: command ?? '', user },
    };
  }

  private toInvoker<E extends GatewayEvent>(row: InteractionRow, event: E, payload: GatewayEvents[E]): Promise<void> {
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

/** The ids of a message's attachments, which an edit may keep by naming them. */
function attachmentIds(message: MessageRow | undefined): ReadonlySet<string> {
  return new Set((message?.attachments ?? []).map((a) => a.id));
}
