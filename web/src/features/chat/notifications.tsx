import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import {
  type Channel,
  ChannelType,
  type GuildSettingsChanges,
  type Message,
  type MuteConfig,
} from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { channelPath } from './context.ts';
import { type ChatStore, PRIVATE_SETTINGS } from './store.ts';

/** Mutes (of guilds, channels and conversations) chosen before they were kept on the server: uploaded once, then removed. */
const MUTE_KEY = 'hearth.muted';
/** Levels chosen before they were kept on the server: uploaded once, then removed. */
const LEVEL_KEY = 'hearth.notify';
const PROMPT_KEY = 'hearth.notifications.asked';

/** What notifies: every message, only mentions of the person (and @everyone), or nothing. */
export type NotifyLevel = 'all' | 'mentions' | 'nothing';
export const NOTIFY_LEVELS: NotifyLevel[] = ['all', 'mentions', 'nothing'];

/** The server's `message_notifications` of each level (3, absent here, follows the guild). */
const LEVEL_NUMBERS: Record<NotifyLevel, number> = { all: 0, mentions: 1, nothing: 2 };
const FOLLOW = 3;

function levelOf(value: number | undefined): NotifyLevel | undefined {
  return NOTIFY_LEVELS.find((level) => LEVEL_NUMBERS[level] === value);
}

/** A mute that is on: muted, and its end (if any) not passed yet. */
function mutedNow(entry: { muted: boolean; mute_config: MuteConfig | null } | undefined): boolean {
  if (!entry?.muted) return false;
  const end = entry.mute_config?.end_time;
  return !end || Date.parse(end) > Date.now();
}

/**
 * Which entry of the person's settings holds channel `id`'s override: its guild's, or for a DM or group DM the
 * direct conversations' (`PRIVATE_SETTINGS`, the server's `guild_id` null).
 */
function entryOf(store: ChatStore, id: string): string | undefined {
  const channel = store.channels.get(id);
  if (!channel) return undefined;
  return channel.guild_id ?? (isConversation(channel) ? PRIVATE_SETTINGS : undefined);
}

function isConversation(channel: Channel): boolean {
  return channel.type === ChannelType.DM || channel.type === ChannelType.GroupDM;
}

/** The channel `id`'s override in the person's settings, with the key of the entry that holds it. */
function overrideOf(store: ChatStore, id: string) {
  const guildId = entryOf(store, id);
  if (!guildId) return undefined;
  return { guildId, override: store.guildSettings.get(guildId)?.channel_overrides.find((o) => o.channel_id === id) };
}

/** Whether a guild's settings suppress @everyone / @here pings, or role pings (docs/web.md). */
export function suppresses(store: ChatStore, guildId: string, what: 'everyone' | 'roles'): boolean {
  const settings = store.guildSettings.get(guildId);
  return what === 'everyone' ? !!settings?.suppress_everyone : !!settings?.suppress_roles;
}

export function setSuppress(store: ChatStore, guildId: string, what: 'everyone' | 'roles', on: boolean) {
  return store.saveGuildSettings(guildId, what === 'everyone' ? { suppress_everyone: on } : { suppress_roles: on });
}

/** Whether a category is folded in the channel list (its override's `collapsed`, kept on the server). */
export function isCollapsed(store: ChatStore, categoryId: string): boolean {
  return !!overrideOf(store, categoryId)?.override?.collapsed;
}

export function setCollapsed(store: ChatStore, categoryId: string, collapsed: boolean): Promise<void> {
  const place = overrideOf(store, categoryId);
  if (!place) return Promise.resolve();
  return store.saveGuildSettings(place.guildId, { channel_overrides: { [categoryId]: { collapsed } } });
}

/**
 * The level chosen for a guild or a channel, from the person's settings on the server (READY
 * `user_guild_settings`); undefined: none chosen (the guild's default, or for a channel its guild's level).
 */
export function chosenLevel(store: ChatStore, id: string): NotifyLevel | undefined {
  if (store.guilds.has(id)) return levelOf(store.guildSettings.get(id)?.message_notifications);
  return levelOf(overrideOf(store, id)?.override?.message_notifications);
}

/** Chooses a guild's or a guild channel's level (undefined: follow the guild, or the guild's default). */
export function setLevel(store: ChatStore, id: string, level: NotifyLevel | undefined): Promise<void> {
  const value = level ? LEVEL_NUMBERS[level] : FOLLOW;
  if (store.guilds.has(id)) return store.saveGuildSettings(id, { message_notifications: value });
  const place = overrideOf(store, id);
  if (!place) return Promise.resolve();
  return store.saveGuildSettings(place.guildId, { channel_overrides: { [id]: { message_notifications: value } } });
}

/** A guild's level: the person's choice, else the guild's default notifications (0 all messages, 1 mentions). */
export function guildLevel(store: ChatStore, guildId: string): NotifyLevel {
  return (
    chosenLevel(store, guildId) ??
    (store.guilds.get(guildId)?.guild.default_message_notifications === 1 ? 'mentions' : 'all')
  );
}

/** A channel's level: its own choice, else its guild's; a direct conversation's, else every message. */
export function channelLevel(store: ChatStore, channel: Channel): NotifyLevel {
  if (!channel.guild_id) return chosenLevel(store, channel.id) ?? 'all';
  return chosenLevel(store, channel.id) ?? guildLevel(store, channel.guild_id);
}

/** Whether a channel is silenced: muted itself, or in a muted guild. */
export function isSilenced(store: ChatStore, channel: Channel): boolean {
  return isMuted(store, channel.id) || (!!channel.guild_id && isMuted(store, channel.guild_id));
}

/**
 * The count the tab's title starts with, "(3) #general · Hearth": unread mentions (and direct messages) outside
 * muted channels and guilds, so a muted place does not call from the tab bar either.
 */
export function titleCount(store: ChatStore): number {
  let total = 0;
  for (const [channelId, count] of store.mentions) {
    const channel = store.channels.get(channelId);
    if (channel && isSilenced(store, channel)) continue;
    total += count;
  }
  return total;
}

function localMutes(): Set<string> {
  try {
    return new Set(JSON.parse(window.localStorage.getItem(MUTE_KEY) ?? '[]') as string[]);
  } catch {
    return new Set();
  }
}

/**
 * Muted guilds, channels and direct conversations (no unread badge, no notification), from the person's settings
 * on the server, so a mute follows the account to every tab and device.
 */
export function isMuted(store: ChatStore, id: string): boolean {
  if (store.guilds.has(id)) return mutedNow(store.guildSettings.get(id));
  return mutedNow(overrideOf(store, id)?.override);
}

export function setMuted(store: ChatStore, id: string, muted: boolean): Promise<void> {
  // An unmute clears a timed mute's end too; a mute from here lasts until unmuted.
  const change = { muted, mute_config: null };
  if (store.guilds.has(id)) return store.saveGuildSettings(id, change);
  const place = overrideOf(store, id);
  if (place) return store.saveGuildSettings(place.guildId, { channel_overrides: { [id]: change } });
  return Promise.resolve();
}

/**
 * Mutes and levels chosen in this browser before the server kept them are sent to it once, after READY, then
 * forgotten here: a direct conversation's mute goes to the conversations' entry. Ids of places the person is no
 * longer in are dropped.
 */
export async function uploadLocalChoices(store: ChatStore): Promise<void> {
  const muted = localMutes();
  let levels: Record<string, NotifyLevel> = {};
  try {
    levels = JSON.parse(window.localStorage.getItem(LEVEL_KEY) ?? '{}') as Record<string, NotifyLevel>;
  } catch {
    // Unreadable: nothing to carry over.
  }
  const ids = new Set([...muted, ...Object.keys(levels)]);
  const changes = new Map<string, GuildSettingsChanges>();
  for (const id of ids) {
    const guildId = store.guilds.has(id) ? id : entryOf(store, id);
    if (!guildId) continue;
    const change: { muted?: boolean; message_notifications?: number } = {};
    if (muted.has(id)) change.muted = true;
    const level = levels[id];
    if (level && NOTIFY_LEVELS.includes(level)) change.message_notifications = LEVEL_NUMBERS[level];
    const entry = changes.get(guildId) ?? {};
    if (id === guildId) Object.assign(entry, change);
    else entry.channel_overrides = { ...entry.channel_overrides, [id]: change };
    changes.set(guildId, entry);
  }
  if (ids.size === 0) return;
  window.localStorage.removeItem(MUTE_KEY);
  window.localStorage.removeItem(LEVEL_KEY);
  await Promise.all([...changes].map(([guildId, change]) => store.saveGuildSettings(guildId, change)));
}

/**
 * Browser notifications when the tab is hidden or on another channel, unless muted: direct messages, and in a guild
 * what the channel's level asks for (every message, mentions only, or nothing).
 * The permission is never asked on load: the friends page offers it (`NotificationPrompt`).
 */
export function useNotifications(store: ChatStore, activeChannelId: string | null): void {
  const { navigate } = useApp();
  const ready = store.ready;
  useEffect(() => {
    if (ready) void uploadLocalChoices(store).catch(() => undefined);
  }, [store, ready]);
  useEffect(() => {
    store.onIncoming = (message: Message) => {
      if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
      const channel = store.channels.get(message.channel_id);
      if (!channel) return;
      if (isSilenced(store, channel)) return;
      const onScreen = document.visibilityState === 'visible' && activeChannelId === channel.id;
      if (onScreen) return;
      const direct = !channel.guild_id;
      // Suppressed @everyone / role pings are no mention here (the guild's settings).
      const mentioned = store.mentionsMe(message);
      const level = channelLevel(store, channel);
      if (level === 'nothing' || (level === 'mentions' && !mentioned)) return;
      const who = store.displayName(message.author.id, channel.guild_id);
      const where = direct ? who : `${who} (#${channel.name})`;
      const note = new Notification(where, { body: message.content.slice(0, 200), tag: message.id });
      note.onclick = () => {
        window.focus();
        navigate(channelPath(channel));
        note.close();
      };
    };
    return () => {
      store.onIncoming = null;
    };
  }, [store, activeChannelId, navigate]);
}

/** Offers desktop notifications once, from a button (the browser's prompt follows a click, not a load). */
export function NotificationPrompt() {
  const { t } = useTranslation();
  const [hidden, setHidden] = useState(
    () =>
      typeof Notification === 'undefined' ||
      Notification.permission !== 'default' ||
      window.localStorage.getItem(PROMPT_KEY) === '1',
  );
  if (hidden) return null;
  return (
    <div className="notice info notification-prompt">
      <span>{t('chat.notificationsOffer')}</span>{' '}
      <button
        type="button"
        className="primary small"
        onClick={() => {
          window.localStorage.setItem(PROMPT_KEY, '1');
          void Notification.requestPermission().finally(() => setHidden(true));
        }}
      >
        {t('chat.enableNotifications')}
      </button>{' '}
      <button
        type="button"
        className="ghost small"
        onClick={() => {
          window.localStorage.setItem(PROMPT_KEY, '1');
          setHidden(true);
        }}
      >
        {t('chat.notNow')}
      </button>
    </div>
  );
}
