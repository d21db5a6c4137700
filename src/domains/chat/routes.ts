import type { AnyRoute } from '../../http/route.ts';
import { auditLogRoutes } from './audit-logs.ts';
import { banRoutes } from './bans.ts';
import { channelRoutes } from './channels.ts';
import type { ChatDeps, ChatServices } from './deps.ts';
import { dmRoutes } from './dms.ts';
import { emojiRoutes } from './emojis.ts';
import { guildSettingsRoutes } from './guild-settings.ts';
import { guildRoutes } from './guilds.ts';
import { inviteRoutes } from './invites.ts';
import { memberRoutes } from './members.ts';
import { messageRoutes } from './messages.ts';
import { pinRoutes } from './pins.ts';
import { reactionRoutes } from './reactions.ts';
import { readStateRoutes } from './read-states.ts';
import { relationshipRoutes } from './relationships.ts';
import { roleRoutes } from './roles.ts';
import { savedMessageRoutes } from './saved-messages.ts';
import { scheduledMessageRoutes } from './scheduled-messages.ts';
import { searchRoutes } from './search.ts';
import { stickerRoutes } from './stickers.ts';
import { threadRoutes } from './threads.ts';
import { typingRoutes } from './typing.ts';

/** Every chat-core route of docs/chat.md, with the chat rows of the users' routes. */
export function chatRoutes(services: ChatServices): AnyRoute[] {
  const { store, access, events, messages, audit } = services.chatCore;
  const deps: ChatDeps = { services, store, access, events, messages, audit };
  return [
    ...guildRoutes(deps),
    ...channelRoutes(deps),
    ...roleRoutes(deps),
    ...emojiRoutes(deps),
    ...stickerRoutes(deps),
    ...memberRoutes(deps),
    ...banRoutes(deps),
    ...inviteRoutes(deps),
    ...messageRoutes(deps),
    ...reactionRoutes(deps),
    ...pinRoutes(deps),
    ...readStateRoutes(deps, services.chatCore.readStates),
    ...guildSettingsRoutes(deps, services.chatCore.guildSettings),
    ...savedMessageRoutes(deps),
    ...scheduledMessageRoutes(deps, services.chatCore.scheduled),
    ...searchRoutes(deps),
    ...typingRoutes(deps),
    ...dmRoutes(deps),
    ...relationshipRoutes(deps),
    ...threadRoutes(deps, services.chatCore.threads),
    ...auditLogRoutes(deps, audit),
  ];
}
