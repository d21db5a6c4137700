import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { Database } from '../../platform/db/database.ts';
import type { Logger } from '../../platform/log.ts';
import type { RateLimiter } from '../../platform/state/rate-limiter.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import type { ApplicationsRepository } from '../applications/applications-repository.ts';
import type { InteractionsEndpoint } from '../applications/interactions-endpoint.ts';
import type { AttachmentService } from '../attachments/attachment-service.ts';
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
  /** Delivery to applications that set an interactions endpoint URL. */
  endpoint: Pick<InteractionsEndpoint, 'post'>;
  /** Stores the files of attachment options. */
  attachments: Pick<AttachmentService, 'resolve' | 'discard' | 'deleteDiscarded'>;
  log: Logger;
  /** Where a multipart body's files are staged while it is read. */
  objects: ObjectStore;
  /** Per-person allowances of invocations and of autocomplete requests (docs/bots.md#rate-limits). */
  limiter: RateLimiter;
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
    endpoint: deps.endpoint,
    attachments: deps.attachments,
    log: deps.log,
  });
  return { ...deps, store, service };
}
