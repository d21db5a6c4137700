import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Message } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { channelPath } from './context.ts';
import type { ChatStore } from './store.ts';

const MUTE_KEY = 'hearth.muted';
const PROMPT_KEY = 'hearth.notifications.asked';

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
 * Browser notifications for mentions and DMs when the tab is hidden or on another channel, unless muted.
 * The permission is never asked on load: the friends page offers it (`NotificationPrompt`).
 */
export function useNotifications(store: ChatStore, activeChannelId: string | null): void {
  const { navigate } = useApp();
  useEffect(() => {
    store.onIncoming = (message: Message) => {
      if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
      const channel = store.channels.get(message.channel_id);
      if (!channel) return;
      if (isMuted(channel.id) || (channel.guild_id && isMuted(channel.guild_id))) return;
      const onScreen = document.visibilityState === 'visible' && activeChannelId === channel.id;
      if (onScreen) return;
      const direct = !channel.guild_id;
      const mentioned = message.mention_everyone || message.mentions.some((u) => u.id === store.me);
      if (!direct && !mentioned) return;
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
