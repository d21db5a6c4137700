import { z } from 'zod';
import { enforceAllowance } from '../../http/allowance.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { type AnyRoute, JsonText, type RequestContext, route } from '../../http/route.ts';
import { validate } from '../../http/validation.ts';
import { isSnowflake } from '../../platform/crypto/snowflake.ts';
import { readMessageRequest } from '../attachments/message-request.ts';
import { pathId } from '../chat/access.ts';
import { dmCommandIndex, guildCommandIndex } from './command-index.ts';
import { commandPermissionSchema, commandPermissionsView } from './command-permissions.ts';
import {
  type CommandInput,
  type CommandRow,
  commandBody,
  commandPatchSchema,
  commandSchema,
  commandView,
  MAX_COMMANDS_PER_TYPE,
} from './commands.ts';
import type { InteractionsModule } from './module.ts';
import { callbackSchema, INTERACTION_TYPES, invokeSchema } from './service.ts';

/** Ten files of 25 MiB, as a message, plus the JSON. */
/** Invocations (commands, components, modal submits) and autocomplete requests per person per 5 s. */
const INVOKE_LIMIT = 10;
const AUTOCOMPLETE_LIMIT = 25;
const INTERACTION_BODY_LIMIT = 10 * 25 * 1024 * 1024 + 1024 * 1024;
const COMMAND_WRITES = { bucket: 'applications:commands', limit: 50, windowSeconds: 20 };
const COMMAND_READS = { bucket: 'applications:commands_read', limit: 100, windowSeconds: 20 };
const INDEX_READS = { bucket: 'applications:command_index', limit: 30, windowSeconds: 10 };
const permissionsBody = z.object({ permissions: z.array(commandPermissionSchema).max(100) });

/** Application commands (bot token) and interactions (a person invokes; the bot answers by token). */
export function interactionRoutes(module: InteractionsModule): AnyRoute[] {
  const { store, service, chat, ids, dispatcher } = module;

  /** The path's application must be the calling bot's own. */
  function ownApplication(ctx: RequestContext): string {
    const id = ctx.params.applicationId ?? '';
    if (!isSnowflake(id)) throw new ApiError('UNKNOWN_APPLICATION');
    if (ctx.principal?.kind !== 'bot' || ctx.principal.applicationId !== id) throw new ApiError('MISSING_ACCESS');
    return id;
  }

  /** A guild command's guild must have the application's bot as a member. */
  async function guildOf(ctx: RequestContext): Promise<string> {
    const guildId = pathId(ctx.params.guildId, 'UNKNOWN_GUILD');
    await chat.access.guild(guildId, ctx.user.id, ctx.now);
    return guildId;
  }

  async function create(applicationId: string, guildId: string | null, input: CommandInput) {
    return store.db.transaction(async (tx) => {
      const existing = await store.commands(applicationId, guildId, tx);
      const replaces = existing.some((c) => c.type === input.type && c.name === input.name);
      if (!replaces && (await store.countOfType(applicationId, guildId, input.type, tx)) >= MAX_COMMANDS_PER_TYPE)
        throw new ApiError('MAX_APPLICATION_COMMANDS');
      return store.upsert(
        tx,
        { id: ids.next(), applicationId, guildId, type: input.type, name: input.name },
        commandBody(input),
        ids.next(),
      );
    });
  }

  /** `PUT`: the given list becomes the whole set; commands named like existing ones keep their ids. */
  async function overwrite(applicationId: string, guildId: string | null, raw: unknown): Promise<CommandRow[]> {
    const list = validate(z.array(commandSchema).max(MAX_COMMANDS_PER_TYPE * 3), raw);
    const perType = new Map<number, number>();
    for (const c of list) perType.set(c.type, (perType.get(c.type) ?? 0) + 1);
    if ([...perType.values()].some((n) => n > MAX_COMMANDS_PER_TYPE)) throw new ApiError('MAX_APPLICATION_COMMANDS');
    const keys = list.map((c) => `${c.type}:${c.name}`);
    if (new Set(keys).size !== keys.length) throw fieldError('name', 'INVALID_FORMAT', 'Command names must be unique');
    return store.db.transaction(async (tx) => {
      const rows = await store.upsertMany(
        tx,
        applicationId,
        guildId,
        list.map((input) => ({
          id: ids.next(),
          type: input.type,
          name: input.name,
          body: commandBody(input),
          version: ids.next(),
        })),
      );
      await store.removeExcept(
        tx,
        applicationId,
        guildId,
        rows.map((r) => r.id),
      );
      return rows;
    });
  }

  async function patch(applicationId: string, guildId: string | null, id: string, raw: unknown) {
    const existing = await store.command(applicationId, guildId, id);
    if (!existing) throw new ApiError('UNKNOWN_APPLICATION_COMMAND');
    const changes = validate(commandPatchSchema, raw);
    const merged = validate(commandSchema, { ...existing.body, type: existing.type, name: existing.name, ...changes });
    if (merged.type !== existing.type) throw fieldError('type', 'INVALID_FORMAT', 'The type of a command is fixed');
    try {
      const row = await store.update(id, merged.name, merged.type, commandBody(merged), ids.next());
      if (!row) throw new ApiError('UNKNOWN_APPLICATION_COMMAND');
      return commandView(row);
    } catch (error) {
      if ((error as { code?: string }).code === '23505')
        throw fieldError('name', 'INVALID_FORMAT', 'A command with this name exists');
      throw error;
    }
  }

  const commandRoutes = (scope: 'global' | 'guild'): AnyRoute[] => {
    const base =
      scope === 'global'
        ? '/applications/:applicationId/commands'
        : '/applications/:applicationId/guilds/:guildId/commands';
    const target = async (ctx: RequestContext) => ({
      applicationId: ownApplication(ctx),
      guildId: scope === 'guild' ? await guildOf(ctx) : null,
    });
    return [
      route({
        method: 'GET',
        path: base,
        policy: 'bot',
        rateLimit: COMMAND_READS,
        async handler(ctx) {
          const { applicationId, guildId } = await target(ctx);
          return (await store.commands(applicationId, guildId)).map(commandView);
        },
      }),
      route({
        method: 'POST',
        path: base,
        policy: 'bot',
        rateLimit: COMMAND_WRITES,
        body: commandSchema,
        async handler(ctx) {
          const { applicationId, guildId } = await target(ctx);
          const { row, created } = await create(applicationId, guildId, ctx.body);
          if (created) ctx.reply.code(201);
          ctx.reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(commandView(row)));
          return ctx.reply;
        },
      }),
      route({
        method: 'PUT',
        path: base,
        policy: 'bot',
        rateLimit: COMMAND_WRITES,
        bodyKind: 'json',
        async handler(ctx) {
          const { applicationId, guildId } = await target(ctx);
          return (await overwrite(applicationId, guildId, ctx.rawBody)).map(commandView);
        },
      }),
      route({
        method: 'GET',
        path: `${base}/:commandId`,
        policy: 'bot',
        rateLimit: COMMAND_READS,
        async handler(ctx) {
          const { applicationId, guildId } = await target(ctx);
          const row = await store.command(
            applicationId,
            guildId,
            pathId(ctx.params.commandId, 'UNKNOWN_APPLICATION_COMMAND'),
          );
          if (!row) throw new ApiError('UNKNOWN_APPLICATION_COMMAND');
          return commandView(row);
        },
      }),
      route({
        method: 'PATCH',
        path: `${base}/:commandId`,
        policy: 'bot',
        rateLimit: COMMAND_WRITES,
        async handler(ctx) {
          const { applicationId, guildId } = await target(ctx);
          const id = pathId(ctx.params.commandId, 'UNKNOWN_APPLICATION_COMMAND');
          return patch(applicationId, guildId, id, ctx.rawBody);
        },
      }),
      route({
        method: 'DELETE',
        path: `${base}/:commandId`,
        policy: 'bot',
        rateLimit: COMMAND_WRITES,
        async handler(ctx) {
          const { applicationId, guildId } = await target(ctx);
          const id = pathId(ctx.params.commandId, 'UNKNOWN_APPLICATION_COMMAND');
          if (!(await store.remove(applicationId, guildId, id))) throw new ApiError('UNKNOWN_APPLICATION_COMMAND');
          return undefined;
        },
      }),
    ];
  };

  return [
    ...commandRoutes('global'),
    ...commandRoutes('guild'),
    route({
      method: 'GET',
      path: '/applications/:applicationId/guilds/:guildId/commands/permissions',
      policy: 'bot',
      rateLimit: COMMAND_READS,
      async handler(ctx) {
        const applicationId = ownApplication(ctx);
        const guildId = await guildOf(ctx);
        return (await store.permissions(applicationId, guildId)).map((p) =>
          commandPermissionsView(applicationId, guildId, p.command_id, p.permissions),
        );
      },
    }),
    route({
      method: 'GET',
      path: '/applications/:applicationId/guilds/:guildId/commands/:commandId/permissions',
      policy: 'bot',
      rateLimit: COMMAND_READS,
      async handler(ctx) {
        const applicationId = ownApplication(ctx);
        const guildId = await guildOf(ctx);
        const commandId = pathId(ctx.params.commandId, 'UNKNOWN_APPLICATION_COMMAND');
        const permissions = await store.commandPermissions(applicationId, guildId, commandId);
        if (!permissions) throw new ApiError('UNKNOWN_APPLICATION_COMMAND');
        return commandPermissionsView(applicationId, guildId, commandId, permissions);
      },
    }),
    route({
      method: 'PUT',
      path: '/applications/:applicationId/guilds/:guildId/commands/:commandId/permissions',
      policy: 'bot',
      rateLimit: COMMAND_WRITES,
      body: permissionsBody,
      async handler(ctx) {
        const applicationId = ownApplication(ctx);
        const guildId = await guildOf(ctx);
        const commandId = pathId(ctx.params.commandId, 'UNKNOWN_APPLICATION_COMMAND');
        // The application's own id names the application-wide default (Discord's rule).
        if (commandId !== applicationId && !(await store.command(applicationId, guildId, commandId)))
          if (!(await store.command(applicationId, null, commandId))) throw new ApiError('UNKNOWN_APPLICATION_COMMAND');
        await store.setPermissions(applicationId, guildId, commandId, ctx.body.permissions);
        const view = commandPermissionsView(applicationId, guildId, commandId, ctx.body.permissions);
        await dispatcher.dispatch('APPLICATION_COMMAND_PERMISSIONS_UPDATE', view, { kind: 'guild', guildId });
        return view;
      },
    }),
    route({
      method: 'GET',
      path: '/guilds/:guildId/application-command-index',
      policy: 'user-only',
      rateLimit: INDEX_READS,
      async handler(ctx) {
        const guild = await chat.access.guild(pathId(ctx.params.guildId, 'UNKNOWN_GUILD'), ctx.user.id, ctx.now);
        return guildCommandIndex(store, guild, null);
      },
    }),
    route({
      method: 'GET',
      path: '/channels/:channelId/application-command-index',
      policy: 'user-only',
      rateLimit: INDEX_READS,
      async handler(ctx) {
        const access = await chat.access.channel(pathId(ctx.params.channelId, 'UNKNOWN_CHANNEL'), ctx.user.id, ctx.now);
        return access.guild ? guildCommandIndex(store, access.guild, access.channel.id) : dmCommandIndex(store, access);
      },
    }),
    route({
      method: 'POST',
      path: '/interactions',
      policy: 'user-only',
      bodyKind: 'stream',
      // Files of attachment options ride along like a message's (docs/bots.md#attachment-options).
      bodyLimit: INTERACTION_BODY_LIMIT,
      // Room for both allowances below (refused requests count here too): autocomplete fires as the person
      // types (docs/bots.md#rate-limits).
      rateLimit: { bucket: 'interactions:create', limit: 50, windowSeconds: 5 },
      async handler(ctx) {
        const request = await readMessageRequest(ctx, module.objects);
        const body = validate(invokeSchema, request.payload);
        const autocomplete = body.type === INTERACTION_TYPES.AUTOCOMPLETE;
        await enforceAllowance(
          module.limiter,
          ctx,
          `${autocomplete ? 'interactions:autocomplete' : 'interactions:invoke'}:${ctx.user.id}`,
          autocomplete ? AUTOCOMPLETE_LIMIT : INVOKE_LIMIT,
          5_000,
        );
        await service.invoke(ctx.user, body, ctx.now, request.files);
        return undefined;
      },
    }),
    route({
      method: 'POST',
      path: '/interactions/:interactionId/:token/callback',
      policy: 'credential-free',
      bodyKind: 'stream',
      // A reply may carry files as a message does (docs/bots.md#files-in-responses); the token is checked first.
      bodyLimit: INTERACTION_BODY_LIMIT,
      rateLimit: {
        bucket: 'interactions:callback',
        limit: 20,
        windowSeconds: 5,
        keyParams: ['interactionId'],
        exemptFromGlobal: true,
      },
      async preflight(ctx) {
        return service.byToken(ctx.params.token ?? '', ctx.params.interactionId, ctx.now);
      },
      async handler(ctx) {
        const row = ctx.preflight as Awaited<ReturnType<typeof service.byToken>>;
        const request = await readMessageRequest(ctx, module.objects);
        const body = validate(callbackSchema, request.payload);
        const result = await service.callback(row, body, ctx.now, request.files);
        const query = (ctx.query ?? {}) as Record<string, string | undefined>;
        if (query.with_response === 'true' && result) return new JsonText(JSON.stringify(result));
        return undefined;
      },
    }),
  ];
}
