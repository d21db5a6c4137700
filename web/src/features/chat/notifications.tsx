import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Message } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { channelPath } from './context.ts';
import type { ChatStore } from './store.ts';

const MUTE_KEY = 'hearth.muted';
const LEVEL_KEY = 'hearth.notify';
const PROMPT_KEY = 'hearth.notifications.asked';

/** What notifies: every message, only mentions of the person (and @everyone), or nothing. */
export type NotifyLevel = 'all' | 'mentions' | 'nothing';
export const NOTIFY_LEVELS: NotifyLevel[] = ['all', 'mentions', 'nothing'];

function levels(): Record<string, NotifyLevel> {
  try {
    return JSON.parse(window.localStorage.getItem(LEVEL_KEY) ?? '{}') as Record<string, NotifyLevel>;
  } catch {
    return {};
  }
}

/**
 * The level chosen for a guild or a channel, kept in this browser like muting (the account's settings,
 * docs/chat.md#notification-settings, are not wired to the client yet); undefined: none chosen.
 */
export function chosenLevel(id: string): NotifyLevel | undefined {
  const level = levels()[id];
  return level && NOTIFY_LEVELS.includes(level) ? level : undefined;
}

export function setLevel(id: string, level: NotifyLevel | undefined): void {
  const all = levels();
  if (level) all[id] = level;
  else delete all[id];
  window.localStorage.setItem(LEVEL_KEY, JSON.stringify(all));
}

/** A guild's level: the person's choice, else the guild's default notifications (0 all messages, 1 mentions). */
export function guildLevel(store: ChatStore, guildId: string): NotifyLevel {
  return (
    chosenLevel(guildId) ?? (store.guilds.get(guildId)?.guild.default_message_notifications === 1 ? 'mentions' : 'all')
  );
}

/** A channel's level: its own choice, else its guild's; a direct conversation notifies every message. */
export function channelLevel(store: ChatStore, channel: Channel): NotifyLevel {
  if (!channel.guild_id) return 'all';
  return chosenLevel(channel.id) ?? guildLevel(store, channel.guild_id);
}

/** Whether a channel is silenced: muted itself, or in a muted guild. */
export function isSilenced(channel: Channel): boolean {
  return isMuted(channel.id) || (!!channel.guild_id && isMuted(channel.guild_id));
}

/**
 * The count the tab's title starts with, "(3) #general · Hearth": unread mentions (and direct messages) outside
 * muted channels and guilds, so a muted place does not call from the tab bar either.
 */
export function titleCount(store: ChatStore): number {
  let total = 0;
  for (const [channelId, count] of store.mentions) {
    const channel = store.channels.get(channelId);
    if (channel && isSilenced(channel)) continue;
    total += count;
  }
  return total;
}

function mutedSet(): Set<string> {
  try {
    return new Set(JSON.parse(window.localStorage.getItem(MUTE_KEY) ?? '[]') as string[]);
  } catch {
    return new Set();
  }
}

/** Muted guilds and channels, kept in this browser (no unread badge, no notification). */
export function isMuted(id: string): boolean {
  return mutedSet().has(id);
}

export function setMuted(id: string, muted: boolean): void {
  const set = mutedSet();
  if (muted) set.add(id);
  else set.delete(id);
  window.localStorage.setItem(MUTE_KEY, JSON.stringify([...set]));
}

/**
 * Browser notifications when the tab is hidden or on another channel, unless muted: direct messages, and in a guild
 * what the channel's level asks for (every message, mentions only, or nothing).
 * The permission is never asked on load: the friends page offers it (`NotificationPrompt`).
 */
export function useNotifications(store: ChatStore, activeChannelId: string | null): void {
  const { navigate } = useApp();
  useEffect(() => {
    store.onIncoming = (message: Message) => {
      if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
      const channel = store.channels.get(message.channel_id);
      if (!channel) return;
      if (isSilenced(channel)) return;
      const onScreen = document.visibilityState === 'visible' && activeChannelId === channel.id;
      if (onScreen) return;
      const direct = !channel.guild_id;
      const mentioned = message.mention_everyone || message.mentions.some((u) => u.id === store.me);
      const level = channelLevel(store, channel);
      if (level === 'nothing' || (level === 'mentions' && !direct && !mentioned)) return;
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
