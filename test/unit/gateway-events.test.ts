import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import type { ChatEvents } from '../../src/domains/chat/events.ts';
import type { ChannelRow, GuildRow, MemberRow, RoleRow } from '../../src/domains/chat/rows.ts';
import type { SavedMessageView } from '../../src/domains/chat/saved-messages.ts';
import type { ThreadView } from '../../src/domains/chat/thread-views.ts';
import { channelView, guildView, type MessageView, memberView, roleView } from '../../src/domains/chat/views.ts';
import {
  type Audience,
  DISPATCH_TOPIC,
  type Dispatch,
  Dispatcher,
  type GatewayEvent,
  type GatewayEvents,
} from '../../src/domains/events/dispatch.ts';
import type { ReadyView } from '../../src/domains/events/ready-view.ts';
import type { InteractionModalView, InteractionView } from '../../src/domains/interactions/interaction-views.ts';
import { dispatchPrefix } from '../../src/gateway/protocol.ts';
import { type PrivateUser, partialUser, type UserRecord } from '../../src/identity/user-record.ts';
import { type EventBus, InProcessEventBus } from '../../src/platform/state/event-bus.ts';
import type { StoredVoiceState } from '../../src/platform/state/voice-states.ts';

// docs/gateway.md#every-event: gateway events and their payload types are one catalogue (`GatewayEvents`,
// src/domains/events/catalogue.ts). The `@ts-expect-error` lines are the assertion: `npm run typecheck` fails if
// any of them ever compiles.
it('dispatches catalogued events with their payload type, and nothing else compiles', async () => {
  const bus: EventBus = new InProcessEventBus();
  const seen: Dispatch[] = [];
  bus.subscribe(DISPATCH_TOPIC, (dispatch) => seen.push(dispatch));
  const dispatcher = new Dispatcher(bus);
  const audience: Audience = { kind: 'users', userIds: ['1'] };
  await dispatcher.dispatch('MESSAGE_DELETE', { id: '2', channel_id: '3' }, audience);
  // @ts-expect-error an event the catalogue does not list
  await dispatcher.dispatch('MESSAGE_DESTROY', { id: '2', channel_id: '3' }, audience);
  // @ts-expect-error a payload of another event's shape
  await dispatcher.dispatch('MESSAGE_DELETE', { ids: ['2'], channel_id: '3' }, audience);
  // @ts-expect-error a field of the wrong type
  await dispatcher.dispatch('CHANNEL_PINS_ACK', { channel_id: '3', timestamp: 'now', version: '1' }, audience);
  // @ts-expect-error the gateway's own frames go through the catalogue too
  dispatchPrefix('GUILD_MEMBERS_CHUNK', { guild_id: '1' });
  assert.deepEqual(
    seen.map((d) => d.event),
    ['MESSAGE_DELETE', 'MESSAGE_DESTROY', 'MESSAGE_DELETE', 'CHANNEL_PINS_ACK'],
  );
  // A switch over the event narrows the payload.
  const [first] = seen;
  if (first?.event === 'MESSAGE_DELETE') assert.equal(first.payload.id, '2');
  else assert.fail('expected MESSAGE_DELETE first');
});

it("types ChatEvents' helpers by the catalogue, without the fields they add", () => {
  // Type-level only: the helpers add `guild_id` (and `channel_id`) themselves.
  const check = (events: ChatEvents) => {
    void events.guild('GUILD_ROLE_DELETE', '1', { role_id: '2' });
    // @ts-expect-error a payload without the event's own fields
    void events.guild('GUILD_ROLE_DELETE', '1', { role: {} });
    // @ts-expect-error an event the catalogue does not list
    void events.users('GUILD_ROLE_DELETED', ['1'], { guild_id: '1', role_id: '2' });
  };
  assert.equal(typeof check, 'function');
});

// Whole-object events are typed by the domains' view types (docs/gateway.md#every-event): a payload missing a
// required field, or with one of another type, does not compile. Type-level only, like the helpers' test above.
it('types whole-object events by the view builders', () => {
  const check = (
    dispatcher: Dispatcher,
    events: ChatEvents,
    rows: { channel: ChannelRow; user: UserRecord; guild: GuildRow; role: RoleRow; member: MemberRow },
    message: MessageView,
    user: PrivateUser,
    thread: ThreadView,
    voice: StoredVoiceState,
    saved: SavedMessageView['save_data'],
  ) => {
    const audience: Audience = { kind: 'users', userIds: ['1'] };
    void dispatcher.dispatch('MESSAGE_CREATE', { ...message, guild_id: '1' }, audience);
    const { author: _author, ...withoutAuthor } = message;
    // @ts-expect-error a message without its author
    void dispatcher.dispatch('MESSAGE_CREATE', withoutAuthor, audience);
    // @ts-expect-error a message whose timestamp is a number
    void dispatcher.dispatch('MESSAGE_UPDATE', { ...message, timestamp: 0 }, audience);
    // @ts-expect-error the author's member carries no roles
    void events.channel('MESSAGE_CREATE', { channel: rows.channel, recipients: undefined }, { ...message, member: {} });
    void dispatcher.dispatch('USER_UPDATE', user, audience);
    // @ts-expect-error USER_UPDATE is the private user, not the partial one
    void dispatcher.dispatch('USER_UPDATE', partialUser(rows.user), audience);
    const channel = channelView(rows.channel);
    void dispatcher.dispatch('CHANNEL_CREATE', channel, audience);
    void dispatcher.dispatch('CHANNEL_DELETE', { id: '2', type: 1 }, audience);
    // @ts-expect-error a closed DM still says its type
    void dispatcher.dispatch('CHANNEL_DELETE', { id: '2' }, audience);
    const { permission_overwrites: _overwrites, ...withoutOverwrites } = channel;
    // @ts-expect-error a guild channel without its overwrites
    void dispatcher.dispatch('CHANNEL_UPDATE', withoutOverwrites, audience);
    void dispatcher.dispatch('THREAD_UPDATE', thread, audience);
    const { thread_metadata: _metadata, ...withoutMetadata } = thread;
    // @ts-expect-error a thread without its metadata
    void dispatcher.dispatch('THREAD_UPDATE', withoutMetadata, audience);
    // @ts-expect-error THREAD_LIST_SYNC's members are thread members, not threads
    void dispatcher.dispatch('THREAD_LIST_SYNC', { guild_id: '1', threads: [thread], members: [thread] }, audience);
    const role = roleView(rows.role);
    void events.guild('GUILD_ROLE_CREATE', '1', { role });
    // @ts-expect-error a role's permissions are a decimal string, not a number
    void events.guild('GUILD_ROLE_UPDATE', '1', { role: { ...role, permissions: 8 } });
    const member = memberView(rows.member, rows.user);
    void events.guild('GUILD_MEMBER_ADD', '1', member);
    const { roles: _roles, ...withoutRoles } = member;
    // @ts-expect-error a member without its roles
    void events.guild('GUILD_MEMBER_UPDATE', '1', withoutRoles);
    void events.guild('GUILD_UPDATE', '1', { ...guildView(rows.guild), roles: [role] });
    // @ts-expect-error GUILD_UPDATE carries the roles
    void events.guild('GUILD_UPDATE', '1', guildView(rows.guild));
    void events.users('GUILD_CREATE', ['1'], { id: '1', unavailable: true });
    // @ts-expect-error an available guild's GUILD_CREATE is the whole payload, not the guild's own fields
    void events.users('GUILD_CREATE', ['1'], guildView(rows.guild));
    // @ts-expect-error a presence without its status
    void dispatcher.dispatch('PRESENCE_UPDATE', { user: { id: '1' }, activities: [] }, audience);
    void dispatcher.dispatch('VOICE_STATE_UPDATE', { ...voice, channel_id: null }, audience);
    const { session_id: _session, ...withoutSession } = voice;
    // @ts-expect-error a voice state without its session
    void dispatcher.dispatch('VOICE_STATE_UPDATE', withoutSession, audience);
    void dispatcher.dispatch('VOICE_SERVER_UPDATE', { token: 't', endpoint: 'e', guild_id: '1' }, audience);
    // @ts-expect-error a voice server says its guild or its DM channel
    void dispatcher.dispatch('VOICE_SERVER_UPDATE', { token: 't', endpoint: 'e' }, audience);
    const reaction = { channel_id: '1', message_id: '2', user_id: '3' };
    void dispatcher.dispatch('MESSAGE_REACTION_REMOVE', { ...reaction, emoji: { id: null, name: 'x' } }, audience);
    // @ts-expect-error a custom emoji says whether it is animated
    void dispatcher.dispatch('MESSAGE_REACTION_REMOVE', { ...reaction, emoji: { id: '4', name: 'x' } }, audience);
    void events.users('SAVED_MESSAGE_CREATE', ['1'], { save_data: saved, message });
    // @ts-expect-error a saved message always has its save data
    void events.users('SAVED_MESSAGE_CREATE', ['1'], { message });
    // @ts-expect-error CALL_CREATE lists who is in the call
    void dispatcher.dispatch('CALL_CREATE', { channel_id: '1', message_id: '2', region: 'r', ringing: [] }, audience);
  };
  assert.equal(typeof check, 'function');
});

// READY, settings, interactions and command permissions are typed too (docs/gateway.md#every-event): the last
// payloads that were an untyped object. Type-level only.
it('types READY, USER_SETTINGS_UPDATE, the interaction events and command permissions', () => {
  const check = (
    dispatcher: Dispatcher,
    ready: ReadyView,
    interaction: InteractionView,
    modal: InteractionModalView,
  ) => {
    const audience: Audience = { kind: 'users', userIds: ['1'] };
    void dispatchPrefix('READY', ready);
    const { session_id: _sessionId, ...withoutSession } = ready;
    // @ts-expect-error READY names its session
    void dispatchPrefix('READY', withoutSession);
    // @ts-expect-error READY's user is the private user
    void dispatchPrefix('READY', { ...ready, user: { id: '1' } });
    void dispatcher.dispatch('USER_SETTINGS_UPDATE', { restricted_guilds: ['2'] }, audience);
    // @ts-expect-error a status is one of the four words
    void dispatcher.dispatch('USER_SETTINGS_UPDATE', { status: 1 }, audience);
    // @ts-expect-error a member the settings do not have
    void dispatcher.dispatch('USER_SETTINGS_UPDATE', { restricted_guild: ['2'] }, audience);
    void dispatcher.dispatch('INTERACTION_CREATE', interaction, audience);
    void dispatcher.dispatch('INTERACTION_CREATE', { id: '1', nonce: null }, audience);
    // @ts-expect-error the invoker's copy says its nonce, null when there was none
    void dispatcher.dispatch('INTERACTION_CREATE', { id: '1' }, audience);
    const { token: _token, ...withoutToken } = interaction;
    // @ts-expect-error the bot's interaction carries its token
    void dispatcher.dispatch('INTERACTION_CREATE', withoutToken, audience);
    void dispatcher.dispatch('INTERACTION_MODAL_CREATE', modal, audience);
    const { title: _title, ...withoutTitle } = modal;
    // @ts-expect-error a modal has its title
    void dispatcher.dispatch('INTERACTION_MODAL_CREATE', withoutTitle, audience);
    const permissions = { id: '1', application_id: '2', guild_id: '3' };
    void dispatcher.dispatch(
      'APPLICATION_COMMAND_PERMISSIONS_UPDATE',
      { ...permissions, permissions: [{ id: '4', type: 1, permission: true }] },
      audience,
    );
    void dispatcher.dispatch(
      'APPLICATION_COMMAND_PERMISSIONS_UPDATE',
      // @ts-expect-error an override is of a role (1), a user (2) or a channel (3)
      { ...permissions, permissions: [{ id: '4', type: 4, permission: true }] },
      audience,
    );
  };
  assert.equal(typeof check, 'function');
});

/** Every catalogued event once: `satisfies` fails typecheck on a missing or an extra name. */
const CATALOGUE = {
  READY: 0,
  RESUMED: 0,
  USER_UPDATE: 0,
  USER_SETTINGS_UPDATE: 0,
  USER_GUILD_SETTINGS_UPDATE: 0,
  USER_NOTE_UPDATE: 0,
  RELATIONSHIP_ADD: 0,
  RELATIONSHIP_UPDATE: 0,
  RELATIONSHIP_REMOVE: 0,
  GUILD_CREATE: 0,
  GUILD_UPDATE: 0,
  GUILD_DELETE: 0,
  GUILD_MEMBER_ADD: 0,
  GUILD_MEMBER_UPDATE: 0,
  GUILD_MEMBER_REMOVE: 0,
  GUILD_MEMBERS_CHUNK: 0,
  GUILD_ROLE_CREATE: 0,
  GUILD_ROLE_UPDATE: 0,
  GUILD_ROLE_UPDATE_BULK: 0,
  GUILD_ROLE_DELETE: 0,
  GUILD_BAN_ADD: 0,
  GUILD_BAN_REMOVE: 0,
  GUILD_EMOJIS_UPDATE: 0,
  GUILD_STICKERS_UPDATE: 0,
  GUILD_AUDIT_LOG_ENTRY_CREATE: 0,
  INVITE_CREATE: 0,
  INVITE_DELETE: 0,
  WEBHOOKS_UPDATE: 0,
  CHANNEL_CREATE: 0,
  CHANNEL_UPDATE: 0,
  CHANNEL_DELETE: 0,
  CHANNEL_PINS_UPDATE: 0,
  CHANNEL_PINS_ACK: 0,
  CHANNEL_RECIPIENT_ADD: 0,
  CHANNEL_RECIPIENT_REMOVE: 0,
  TYPING_START: 0,
  MESSAGE_CREATE: 0,
  MESSAGE_UPDATE: 0,
  MESSAGE_DELETE: 0,
  MESSAGE_DELETE_BULK: 0,
  MESSAGE_REACTION_ADD: 0,
  MESSAGE_REACTION_REMOVE: 0,
  MESSAGE_REACTION_REMOVE_ALL: 0,
  MESSAGE_REACTION_REMOVE_EMOJI: 0,
  MESSAGE_ACK: 0,
  SAVED_MESSAGE_CREATE: 0,
  SAVED_MESSAGE_DELETE: 0,
  THREAD_CREATE: 0,
  THREAD_UPDATE: 0,
  THREAD_DELETE: 0,
  THREAD_LIST_SYNC: 0,
  THREAD_MEMBER_UPDATE: 0,
  THREAD_MEMBERS_UPDATE: 0,
  PRESENCE_UPDATE: 0,
  INTERACTION_CREATE: 0,
  INTERACTION_SUCCESS: 0,
  INTERACTION_MODAL_CREATE: 0,
  APPLICATION_COMMAND_AUTOCOMPLETE_RESPONSE: 0,
  APPLICATION_COMMAND_PERMISSIONS_UPDATE: 0,
  VOICE_STATE_UPDATE: 0,
  VOICE_SERVER_UPDATE: 0,
  CALL_CREATE: 0,
  CALL_UPDATE: 0,
  CALL_DELETE: 0,
  CHANNEL_VISIBILITY: 0,
} as const satisfies Record<GatewayEvent, 0>;

it('lists in docs/gateway.md#every-event exactly the catalogued events (the internal one aside)', () => {
  const docs = readFileSync('docs/gateway.md', 'utf8');
  const section = docs.slice(docs.indexOf('### Every event'), docs.indexOf('\n## ', docs.indexOf('### Every event')));
  const documented = new Set<string>();
  for (const row of section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| Area')))
    for (const [, name] of (row.split('|')[2] ?? '').matchAll(/`([A-Z][A-Z_]+)`/g)) documented.add(name as string);
  const catalogued = Object.keys(CATALOGUE).filter((name) => name !== 'CHANNEL_VISIBILITY');
  assert.deepEqual([...documented].sort(), catalogued.sort());
  // The payload map and the name list are the same keys.
  const keys: (keyof GatewayEvents)[] = Object.keys(CATALOGUE) as (keyof typeof CATALOGUE)[];
  assert.equal(keys.length, 65);
});
