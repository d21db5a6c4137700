import type { PartialUser } from '../../identity/user-record.ts';
import type { MemberRow, RoleRow } from '../chat/rows.ts';
import type { ThreadView } from '../chat/thread-views.ts';
import {
  type GuildChannelView,
  type MemberView,
  type MessageView,
  memberView,
  type RoleView,
  roleView,
} from '../chat/views.ts';
import type { Modal } from './components.ts';
import type { SentOption } from './option-values.ts';

/** discord-api-types' APIInteractionDataResolvedGuildMember, with the member's permissions in the invoked channel. */
export type ResolvedMemberView = Pick<
  MemberView,
  'avatar' | 'banner' | 'communication_disabled_until' | 'joined_at' | 'nick' | 'roles'
> & { flags: number; pending: boolean; premium_since: null; permissions: string };

/** discord-api-types' APIRole: a guild's role list leaves out the members whose values are Hearth's defaults. */
export type ResolvedRoleView = RoleView & {
  colors: { primary_color: number; secondary_color: null; tertiary_color: null };
  icon: null;
  unicode_emoji: null;
  flags: number;
};

/** discord-api-types' APIInteractionDataResolvedChannel: the person's permissions in it; a thread's parent and metadata. */
export type ResolvedChannelView = {
  id: string;
  name: string | null;
  type: number;
  permissions: string;
  parent_id?: ThreadView['parent_id'];
  thread_metadata?: ThreadView['thread_metadata'];
};

/**
 * discord-api-types' APIInteractionDataResolved: what an invocation's options or target name, each kind an open
 * map from the id to the object, present only when the invocation names one.
 */
export type ResolvedView = {
  users?: Record<string, PartialUser>;
  members?: Record<string, ResolvedMemberView>;
  roles?: Record<string, ResolvedRoleView>;
  channels?: Record<string, ResolvedChannelView>;
  /** As a message's attachments are. */
  attachments?: Record<string, MessageView['attachments'][number]>;
  messages?: Record<string, MessageView>;
};

/** `data` of a command or autocomplete interaction: the command, the options as sent, a user or message command's target. */
export type CommandDataView = {
  id: string;
  name: string;
  type: number;
  options?: SentOption[];
  target_id?: string;
  /** A guild command's guild. */
  guild_id?: string;
  resolved?: ResolvedView;
};

/** `data` of a component interaction, as the person's client sent it. */
export type ComponentDataView = { component_type: number; custom_id: string; values?: string[] | undefined };

/** `data` of a modal submit: the modal's custom id and its text inputs' values. */
export type ModalSubmitDataView = {
  custom_id: string;
  components: { type: 1; components: { type: 4; custom_id: string; value: string }[] }[];
};

/** Where an interaction happened: a guild's carries the guild and the invoking member, a DM's the invoking user. */
type InteractionPlace =
  | {
      guild_id: string;
      guild: { id: string; locale: string; features: [] };
      guild_locale: string;
      member: MemberView & { permissions: string; flags: number };
    }
  | { user: PartialUser };

/**
 * INTERACTION_CREATE to the application's bot, and the body POSTed to its interactions endpoint (docs/bots.md):
 * discord-api-types' APIInteraction as `InteractionsService.interactionPayload` builds it. `channel` is rendered by
 * `channelView`, in a DM too.
 */
export type InteractionView = {
  id: string;
  application_id: string;
  type: number;
  token: string;
  version: 1;
  channel_id: string;
  channel: GuildChannelView;
  /** The bot's permissions in the channel (the person's where the bot's cannot be read). */
  app_permissions: string;
  locale: string;
  entitlements: [];
  /** `{"0": guild id}` in a guild, `{"1": user id}` in a DM. */
  authorizing_integration_owners: { '0': string } | { '1': string };
  context: 0 | 1;
  attachment_size_limit: number;
  data?: CommandDataView | ComponentDataView | ModalSubmitDataView;
  /** A component interaction's message. */
  message?: MessageView | undefined;
} & InteractionPlace;

/** INTERACTION_CREATE to the invoking person's sessions: the interaction's id for their client's nonce. */
export type InteractionNonceView = { id: string; nonce: string | null };

/** INTERACTION_MODAL_CREATE: the modal a bot answered with, to the invoking person's sessions (docs/bots.md). */
export type InteractionModalView = {
  id: string;
  channel_id: string;
  custom_id: string;
  title: string;
  components: Modal['components'];
  application: { id: string; name: string; icon: string | null };
};

/**
 * The callback route's answer (discord-api-types' RESTPostAPIInteractionCallbackWithResponseResult): the
 * interaction, and the message the response posted or updated, if it did.
 */
export type CallbackResponseView = {
  interaction: { id: string; type: number };
  resource?: { type: number; message: MessageView };
};

/** A resolved member (`ResolvedMemberView`): the member without `user`, `deaf` and `mute`. */
export function resolvedMember(member: MemberRow, permissions: bigint): ResolvedMemberView {
  const { nick, avatar, banner, roles, joined_at, communication_disabled_until } = memberView(member, undefined, {
    includeUser: false,
  });
  return {
    avatar,
    banner,
    communication_disabled_until,
    flags: 0,
    joined_at,
    nick,
    pending: false,
    premium_since: null,
    roles,
    permissions: String(permissions),
  };
}

/** A resolved role (`ResolvedRoleView`). */
export function resolvedRole(role: RoleRow): ResolvedRoleView {
  return {
    ...roleView(role),
    colors: { primary_color: role.color, secondary_color: null, tertiary_color: null },
    icon: null,
    unicode_emoji: null,
    flags: 0,
  };
}
