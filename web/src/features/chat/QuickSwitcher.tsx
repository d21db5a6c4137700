import { type KeyboardEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ChannelType } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { channelPath, useChat } from './context.ts';
import { Dialog } from './Dialog.tsx';

/** Ctrl/Cmd+K: type part of a channel, DM or server name, Enter to go. */
export function QuickSwitcher({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState(0);
  const q = query.toLowerCase().replace(/^[#@]/, '');
  const entries: { id: string; label: string; to: string }[] = [];
  for (const { guild } of store.guilds.values()) {
    for (const channel of store.guildChannels(guild.id)) {
      if (channel.type === ChannelType.Category) continue;
      entries.push({ id: channel.id, label: `#${channel.name} — ${guild.name}`, to: channelPath(channel) });
    }
  }
  for (const channel of store.privateChannels()) {
    entries.push({ id: channel.id, label: `@${store.channelLabel(channel)}`, to: channelPath(channel) });
  }
  const matches = entries.filter((e) => e.label.toLowerCase().replace(/^[#@]/, '').includes(q)).slice(0, 12);
  const go = (to: string | undefined) => {
    if (!to) return;
    onClose();
    navigate(to);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setSelected((selected + step + matches.length) % Math.max(matches.length, 1));
    } else if (event.key === 'Enter') {
      event.preventDefault();
      go(matches[selected]?.to);
    }
  };
  return (
    <Dialog title={t('chat.quickSwitcher')} onClose={onClose}>
      <input
        className="switcher-input"
        role="combobox"
        aria-label={t('chat.switcherLabel')}
        aria-expanded={matches.length > 0}
        aria-controls="switcher-list"
        aria-activedescendant={matches[selected] ? `switcher-${matches[selected]?.id}` : undefined}
        data-autofocus
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setSelected(0);
        }}
        onKeyDown={onKeyDown}
      />
      <div id="switcher-list" role="listbox" aria-label={t('chat.switcherResults')} className="switcher-list">
        {matches.map((entry, index) => (
          <div
            key={entry.id}
            tabIndex={-1}
            id={`switcher-${entry.id}`}
            role="option"
            aria-selected={index === selected}
            onMouseDown={(event) => {
              event.preventDefault();
              go(entry.to);
            }}
          >
            {entry.label}
          </div>
        ))}
      </div>
    </Dialog>
  );
}
