import { useEffect } from 'react';
import { ChannelType } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { channelPath } from './context.ts';
import type { ChatStore } from './store.ts';

/** Ctrl/Cmd+K opens the quick switcher; Alt+Up/Down moves through the sidebar's channels. */
export function useKeyboard(
  store: ChatStore,
  guildId: string | null,
  channelId: string | null,
  openSwitcher: () => void,
): void {
  const { navigate } = useApp();
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        openSwitcher();
        return;
      }
      if (event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) {
        const list = guildId
          ? store.guildChannels(guildId).filter((c) => c.type === ChannelType.Text || c.type === ChannelType.Voice)
          : store.privateChannels();
        if (list.length === 0) return;
        event.preventDefault();
        const index = list.findIndex((c) => c.id === channelId);
        const step = event.key === 'ArrowDown' ? 1 : -1;
        const next = list[(index + step + list.length) % list.length] ?? list[0];
        if (next) navigate(channelPath(next));
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [store, guildId, channelId, openSwitcher, navigate]);
}
