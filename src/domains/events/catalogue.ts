/**
 * Every gateway event Hearth sends as op 0 and the type of its payload (docs/gateway.md#every-event), plus the
 * internal `CHANNEL_VISIBILITY` that never reaches a client. `Dispatcher.dispatch`, `ChatEvents` and the gateway's
 * `dispatchPrefix` take an event of this map with its payload type, so an unknown name or a payload of another
 * shape does not compile; the gateway's fan-out switches over the names exhaustively (src/gateway/fanout.ts), so a
 * new event has to be placed there too. test/unit/gateway-events.test.ts keeps this map and the docs' list equal.
 *
 * A payload that is an object as its REST route shows it (a message, channel, thread, guild, member, role, user,
 * presence, voice state, interaction, settings, …) has the type its view builder returns, defined beside the builder
 * in its domain (READY's, built by the gateway, in ready-view.ts here), so a payload missing a field or with one of
 * another type does not compile. No payload is left untyped.
 */

import type { PartialUser, PrivateUser } from '../../identity/user-record.ts';
import type { EmojiView } from '../chat/emoji-store.ts';
import type { AuditEntryView } from '../chat/guild-audit.ts';
import type { GuildPayloadView, UnavailableGuild } from '../chat/guild-payload.ts';
import type { GuildSettingsView } from '../chat/guild-settings-store.ts';
import type { InviteView } from '../chat/invites.ts';
import type { ReactionEmojiView } from '../chat/reactions.ts';
import type { RelationshipView } from '../chat/relationships.ts';
import type { SavedMessageView } from '../chat/saved-messages.ts';
import type { StickerView } from '../chat/sticker-store.ts';
import type { ThreadMemberView, ThreadView } from '../chat/thread-views.ts';
import type {
  GuildChannelView,
  GuildView,
  MemberView,
  MessageEventView,
  PrivateChannelView,
  RoleView,
} from '../chat/views.ts';
import type { CommandPermissionsView } from '../interactions/command-permissions.ts';
import type { InteractionModalView, InteractionNonceView, InteractionView } from '../interactions/interaction-views.ts';
import type { PresenceView } from '../users/presence-view.ts';
import type { UserSettingsUpdateView } from '../users/settings.ts';
import type { CallCreateView, CallView, VoiceServerView, VoiceStateView } from '../voice/voice-views.ts';
import type { ReadyView } from './ready-view.ts';

/** A user as `partialUser` shows it, or `{id}` alone where the user is gone or not loaded. */
type SomeUser = PartialUser | { id: string };

/** `guild_id` on events of a guild channel; absent (or null in voice) in DMs. */
type InChannel = { channel_id: string; guild_id?: string };

type Reaction = InChannel & { message_id: string; emoji: ReactionEmojiView };

export interface GatewayEvents {
  // Session (docs/gateway.md#identify, #resume)
  READY: ReadyView;
  RESUMED: Record<string, never>;
  // The user
  USER_UPDATE: PrivateUser;
  USER_SETTINGS_UPDATE: UserSettingsUpdateView;
  USER_GUILD_SETTINGS_UPDATE: GuildSettingsView;
  USER_NOTE_UPDATE: { id: string; note: string };
  RELATIONSHIP_ADD: RelationshipView;
  RELATIONSHIP_UPDATE: RelationshipView;
  RELATIONSHIP_REMOVE: { id: string };
  // Guilds
  /** Unavailable (`{id, unavailable: true}`) in a bot's burst when its payload could not be read. */
  GUILD_CREATE: GuildPayloadView | UnavailableGuild;
  GUILD_UPDATE: GuildView & { roles: RoleView[]; guild_id: string };
  GUILD_DELETE: { id: string; unavailable?: boolean };
  GUILD_MEMBER_ADD: MemberView & { guild_id: string };
  GUILD_MEMBER_UPDATE: MemberView & { guild_id: string };
  GUILD_MEMBER_REMOVE: { guild_id: string; user: SomeUser };
  GUILD_MEMBERS_CHUNK: {
    guild_id: string;
    members: MemberView[];
    chunk_index: number;
    chunk_count: number;
    not_found?: string[];
    nonce?: string;
    presences?: PresenceView[];
  };
  GUILD_ROLE_CREATE: { guild_id: string; role: RoleView };
  GUILD_ROLE_UPDATE: { guild_id: string; role: RoleView };
  GUILD_ROLE_UPDATE_BULK: { guild_id: string; roles: RoleView[] };
  GUILD_ROLE_DELETE: { guild_id: string; role_id: string };
  GUILD_BAN_ADD: { guild_id: string; user: SomeUser };
  GUILD_BAN_REMOVE: { guild_id: string; user: SomeUser };
  GUILD_EMOJIS_UPDATE: { guild_id: string; emojis: EmojiView[] };
  GUILD_STICKERS_UPDATE: { guild_id: string; stickers: StickerView[] };
  GUILD_AUDIT_LOG_ENTRY_CREATE: AuditEntryView & { guild_id: string };
  INVITE_CREATE: InviteView & { guild_id: string };
  INVITE_DELETE: { code: string; channel_id: string; guild_id: string };
  WEBHOOKS_UPDATE: { guild_id: string; channel_id: string };
  // Channels
  CHANNEL_CREATE: GuildChannelView | PrivateChannelView;
  CHANNEL_UPDATE: GuildChannelView | PrivateChannelView;
  /** A guild channel whole; a DM or group DM the user closed or left as `{id, type}` only. */
  CHANNEL_DELETE: GuildChannelView | { id: string; type: number };
  CHANNEL_PINS_UPDATE: InChannel & { last_pin_timestamp: string | null };
  CHANNEL_PINS_ACK: { channel_id: string; timestamp: string; version: number };
  CHANNEL_RECIPIENT_ADD: { channel_id: string; user: SomeUser };
  CHANNEL_RECIPIENT_REMOVE: { channel_id: string; user: SomeUser };
  TYPING_START: InChannel & { user_id: string; timestamp: number; member?: MemberView };
  // Messages
  MESSAGE_CREATE: MessageEventView;
  MESSAGE_UPDATE: MessageEventView;
  MESSAGE_DELETE: InChannel & { id: string };
  MESSAGE_DELETE_BULK: InChannel & { ids: string[] };
  MESSAGE_REACTION_ADD: Reaction & { user_id: string; message_author_id: string | null; member?: MemberView };
  MESSAGE_REACTION_REMOVE: Reaction & { user_id: string };
  MESSAGE_REACTION_REMOVE_ALL: InChannel & { message_id: string };
  MESSAGE_REACTION_REMOVE_EMOJI: Reaction;
  MESSAGE_ACK: {
    channel_id: string;
    message_id: string | null;
    version: number;
    mention_count: number;
    manual?: boolean;
  };
  SAVED_MESSAGE_CREATE: SavedMessageView;
  SAVED_MESSAGE_DELETE: { channel_id: string; message_id: string };
  // Threads (docs/chat.md#threads)
  /** `newly_created` when the thread was just started (not when a private thread's new member first sees it). */
  THREAD_CREATE: ThreadView & { newly_created?: true };
  THREAD_UPDATE: ThreadView;
  THREAD_DELETE: { id: string; guild_id: string | null; parent_id: string | null; type: number };
  THREAD_LIST_SYNC: { guild_id: string; channel_ids?: string[]; threads: ThreadView[]; members: ThreadMemberView[] };
  THREAD_MEMBER_UPDATE: ThreadMemberView & { guild_id: string };
  THREAD_MEMBERS_UPDATE: {
    id: string;
    guild_id: string | null;
    member_count: number;
    added_members?: (ThreadMemberView & { presence: null })[];
    removed_member_ids?: string[];
  };
  // Presence (docs/gateway.md#presence)
  PRESENCE_UPDATE: PresenceView;
  // Bots (docs/bots.md)
  /** The interaction to the application's bot; to the invoking person's sessions, its id for their nonce. */
  INTERACTION_CREATE: InteractionView | InteractionNonceView;
  INTERACTION_SUCCESS: { id: string };
  INTERACTION_MODAL_CREATE: InteractionModalView;
  APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE: { id: string; choices: unknown[] | undefined };
  APPLICATION_COMMAND_PERMISSIONS_UPDATE: CommandPermissionsView;
  // Voice (docs/voice.md)
  VOICE_STATE_UPDATE: VoiceStateView;
  VOICE_SERVER_UPDATE: VoiceServerView;
  CALL_CREATE: CallCreateView;
  CALL_UPDATE: CallView;
  CALL_DELETE: { channel_id: string };
  /** Internal, never sent as such: who may see which channel changed (`Audience` `visibility`). */
  CHANNEL_VISIBILITY: Record<string, never>;
}

/** The name of an event Hearth sends (or the internal `CHANNEL_VISIBILITY`). */
export type GatewayEvent = keyof GatewayEvents & string;

/** The payload of `E`. */
export type GatewayPayload<E extends GatewayEvent> = GatewayEvents[E];
