import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { Database } from '../../platform/db/database.ts';
import type { ApplicationsRepository } from '../applications/applications-repository.ts';
import type { ChatModule } from '../chat/module.ts';
import type { Dispatcher } from '../events/dispatch.ts';
import type { UsersRepository } from '../users/users-repository.ts';
import { InteractionsService } from './service.ts';
import { InteractionsStore } from './store.ts';

export interface InteractionsDeps {
  db: Database;
  chat: ChatModule;
  apps: Pick<ApplicationsRepository, 'findById'>;
  users: Pick<UsersRepository, 'findById'>;
  dispatcher: Dispatcher;
  ids: SnowflakeGenerator;
  clock: Clock;
}

export interface InteractionsModule extends InteractionsDeps {
  store: InteractionsStore;
  service: InteractionsService;
}

/** Application commands and interactions (docs/bots.md), built once by the composition root. */
export function createInteractionsModule(deps: InteractionsDeps): InteractionsModule {
  const store = new InteractionsStore(deps.db);
  const service = new InteractionsService({
    store,
    apps: deps.apps,
    chat: deps.chat,
    dispatcher: deps.dispatcher,
    ids: deps.ids,
    clock: deps.clock,
    users: deps.users,
  });
  return { ...deps, store, service };
}
