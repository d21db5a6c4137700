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
import { MessageService } from './message-service.ts';
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
  const threads = new ThreadService(store, threadStore, access, events, messages, deps.clock);
  return {
    store,
    access,
    events,
    messages,
    readModel: new ChatReadModel(store, deps.bus, deps.clock),
    botInstaller: new ChatBotInstaller(store, events, deps.ids, deps.clock),
    threads,
  };
}
