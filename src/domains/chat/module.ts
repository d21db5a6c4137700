import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { Database } from '../../platform/db/database.ts';
import type { EventBus } from '../../platform/state/event-bus.ts';
import type { Dispatcher } from '../events/dispatch.ts';
import type { UsersRepository } from '../users/users-repository.ts';
import { Access } from './access.ts';
import { ChatBotInstaller } from './bot-installer.ts';
import { ChatReadModel } from './chat-read-model.ts';
import { ChatEvents } from './events.ts';
import { GuildAuditLog } from './guild-audit.ts';
import { GuildAuditStore } from './guild-audit-store.ts';
import { GuildJoins } from './guild-joins.ts';
import { GuildSettingsStore } from './guild-settings-store.ts';
import { MessageService, type PingedMentions } from './message-service.ts';
import { ReadStateStore } from './read-state-store.ts';
import { CHANNEL_TYPES, type ChannelRow, isThread } from './rows.ts';
import { ScheduledMessageStore } from './scheduled-message-store.ts';
import { ChatStore } from './store.ts';
import { ThreadService } from './thread-service.ts';
import { ThreadStore } from './thread-store.ts';

export interface ChatModule {
  store: ChatStore;
  access: Access;
  events: ChatEvents;
  messages: MessageService;
  readModel: ChatReadModel;
  botInstaller: ChatBotInstaller;
  threads: ThreadService;
  readStates: ReadStateStore;
  /** Per-guild notification settings (`PATCH /users/@me/guilds/{id}/settings`, READY `user_guild_settings`). */
  guildSettings: GuildSettingsStore;
  /** The guild audit log: recorder for the mutation routes, pages for its route. */
  audit: GuildAuditLog;
  /** Joining through invites (routes, register/login `invite_code`) and the end of temporary memberships. */
  joins: GuildJoins;
  /** Messages kept for later (docs/chat.md#scheduled-messages); the composition root runs their delivery. */
  scheduled: ScheduledMessageStore;
}

/** Builds the chat core's collaborators once, for the composition root. */
export function createChatModule(deps: {
  db: Database;
  users: UsersRepository;
  bus: EventBus;
  dispatcher: Dispatcher;
  ids: SnowflakeGenerator;
  clock: Clock;
}): ChatModule {
  const store = new ChatStore(deps.db, deps.users);
  const threadStore = new ThreadStore(deps.db);
  const access = new Access(store, threadStore);
  const events = new ChatEvents(deps.dispatcher, deps.bus);
  const messages = new MessageService(store, events, deps.ids, deps.clock);
  const audit = new GuildAuditLog(new GuildAuditStore(deps.db), store, threadStore, events, deps.ids);
  const threads = new ThreadService(store, threadStore, access, events, messages, deps.clock, audit);
  const readStates = new ReadStateStore(deps.db);
  const guildSettings = new GuildSettingsStore(deps.db);
  const readModel = new ChatReadModel(store, deps.bus, deps.clock, readStates, guildSettings);
  // Mentions count for the pinged members who can view the channel (a thread: its parent; a private
  // thread: its members and moderators, plus those the message's mentions add to it), read from the
  // gateway's in-memory snapshots.
  const pingedViewers = async (channel: ChannelRow, pinged: PingedMentions, authorId: string | null) => {
    const guildId = channel.guild_id as string;
    if (!isThread(channel)) return readModel.viewersAmong(guildId, channel.id, pinged);
    const viewers = await readModel.viewersAmong(guildId, channel.parent_id as string, pinged);
    if (channel.type !== CHANNEL_TYPES.PRIVATE_THREAD || viewers.length === 0) return viewers;
    const allowed = new Set(await threads.privateViewers(channel));
    if (pinged.users.length > 0 && (await threads.mentionsAdd(channel, authorId)))
      for (const id of pinged.users) allowed.add(id);
    return viewers.filter((id) => allowed.has(id));
  };
  // `@here` pings the viewers online now, besides those named or holding a pinged role. An @everyone / @here or a
  // role ping does not count for a member whose settings of the guild suppress it (`suppress_everyone`,
  // `suppress_roles`); a ping by name always counts.
  messages.setMentionAudience(async (channel, pinged, authorId) => {
    const none: string[] = [];
    const [named, byRole, byEveryone] = await Promise.all([
      pinged.users.length > 0
        ? pingedViewers(channel, { users: pinged.users, roles: [], everyone: false }, authorId)
        : none,
      pinged.roles.length > 0
        ? pingedViewers(channel, { users: [], roles: pinged.roles, everyone: false }, authorId)
        : none,
      pinged.everyone ? pingedViewers(channel, { users: [], roles: [], everyone: true }, authorId) : none,
    ]);
    let everyone = byEveryone;
    if (pinged.hereOnly && store.onlineAmong && everyone.length > 0) {
      const online = await store.onlineAmong(everyone);
      everyone = everyone.filter((id) => online.has(id));
    }
    const suppress = await guildSettings.suppressorsAmong(channel.guild_id as string, [
      ...new Set([...byRole, ...everyone]),
    ]);
    return [
      ...new Set([
        ...named,
        ...byRole.filter((id) => !suppress.roles.has(id)),
        ...everyone.filter((id) => !suppress.everyone.has(id)),
      ]),
    ];
  });
  return {
    store,
    access,
    events,
    messages,
    readModel,
    botInstaller: new ChatBotInstaller(store, events, deps.ids, deps.clock, audit),
    threads,
    readStates,
    guildSettings,
    audit,
    joins: new GuildJoins(deps.db, store, events, messages),
    scheduled: new ScheduledMessageStore(deps.db),
  };
}
