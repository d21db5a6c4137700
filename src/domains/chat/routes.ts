import type { AppServices } from '../../app-services.ts';
import type { AnyRoute } from '../../http/route.ts';
import { banRoutes } from './bans.ts';
import { channelRoutes } from './channels.ts';
import type { ChatDeps } from './deps.ts';
import { dmRoutes } from './dms.ts';
import { guildRoutes } from './guilds.ts';
import { inviteRoutes } from './invites.ts';
import { memberRoutes } from './members.ts';
import { messageRoutes } from './messages.ts';
import { pinRoutes } from './pins.ts';
import { reactionRoutes } from './reactions.ts';
import { relationshipRoutes } from './relationships.ts';
import { roleRoutes } from './roles.ts';
import { threadRoutes } from './threads.ts';
import { typingRoutes } from './typing.ts';

/** Every chat-core route of api.md §3.8 and the chat rows of §3.2. */
export function chatRoutes(services: AppServices): AnyRoute[] {
  const { store, access, events, messages } = services.chatCore;
  const deps: ChatDeps = { services, store, access, events, messages };
  return [
    ...guildRoutes(deps),
    ...channelRoutes(deps),
    ...roleRoutes(deps),
    ...memberRoutes(deps),
    ...banRoutes(deps),
    ...inviteRoutes(deps),
    ...messageRoutes(deps),
    ...reactionRoutes(deps),
    ...pinRoutes(deps),
    ...typingRoutes(deps),
    ...dmRoutes(deps),
    ...relationshipRoutes(deps),
    ...threadRoutes(deps, services.chatCore.threads),
  ];
}
