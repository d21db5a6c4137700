import { type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import type { ApplicationCommand, Channel } from '../../api/chat-types.ts';
import { useChatStore, useChatT } from './context.ts';

/** Discord's command types for the two context menus: 2 on a person, 3 on a message. */
export const USER_COMMAND = 2;
export const MESSAGE_COMMAND = 3;

interface AppEntry {
  command: ApplicationCommand;
  application: string;
}

/**
 * The "Apps" submenu of a person's or a message's context menu (docs/bots.md#user-and-message-commands): the user
 * or message commands this person may use in `channel`, fetched from the command index when opened. Choosing one
 * invokes it through `POST /interactions` with the person or message as `target_id`; the bot's reply arrives in
 * the channel like a slash command's.
 */
export function AppsMenu({
  channel,
  type,
  targetId,
  className = 'ghost icon',
  onError,
}: {
  channel: Channel;
  type: typeof USER_COMMAND | typeof MESSAGE_COMMAND;
  targetId: string;
  className?: string;
  /** Where a refused invocation (or an index that could not be read) is reported; `null` clears it. */
  onError: (error: unknown) => void;
}) {
  const t = useChatT();
  // Only the API is used: no subscription, so the menu in every message row does not re-render on each change.
  const store = useChatStore();
  const menuId = useId();
  const [open, setOpen] = useState(false);
  const [entries, setEntries] = useState<AppEntry[] | null>(null);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    let live = true;
    setEntries(null);
    store.api
      .commandIndex(channel.id)
      .then((index) => {
        if (!live) return;
        const apps = new Map(index.applications.map((a) => [a.id, a.name]));
        setEntries(
          index.application_commands
            .filter((c) => c.type === type)
            .map((command) => ({ command, application: apps.get(command.application_id) ?? '' }))
            .sort((a, b) => a.command.name.localeCompare(b.command.name)),
        );
      })
      .catch((caught) => {
        if (!live) return;
        setEntries([]);
        onError(caught);
      });
    return () => {
      live = false;
    };
  }, [open, channel.id, type, store, onError]);

  useEffect(() => {
    if (open && entries && entries.length > 0)
      menu.current?.querySelector<HTMLButtonElement>('[role="menuitem"]')?.focus();
  }, [open, entries]);

  const close = () => {
    setOpen(false);
    button.current?.focus();
  };

  const choose = async (command: ApplicationCommand) => {
    setOpen(false);
    onError(null);
    try {
      await store.api.interact({
        type: 2,
        nonce: String(Date.now()),
        application_id: command.application_id,
        guild_id: channel.guild_id ?? null,
        channel_id: channel.id,
        data: { id: command.id, name: command.name, type: command.type, target_id: targetId },
      });
    } catch (caught) {
      onError(caught);
    }
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const items = [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? [])];
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      close();
    } else if (event.key === 'ArrowDown' && items.length > 0) {
      event.preventDefault();
      items[(at + 1) % items.length]?.focus();
    } else if (event.key === 'ArrowUp' && items.length > 0) {
      event.preventDefault();
      items[(at - 1 + items.length) % items.length]?.focus();
    }
  };

  return (
    <span className="apps-menu">
      <button
        ref={button}
        type="button"
        className={className}
        aria-label={t('chat.apps')}
        title={t('chat.apps')}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        onClick={() => setOpen(!open)}
      >
        {className.includes('icon') ? '⚙' : t('chat.apps')}
      </button>
      {open && (entries === null || entries.length === 0) && (
        <p id={menuId} className="apps-menu-list hint" role="status">
          {entries === null ? t('chat.appsLoading') : t('chat.appsNone')}
        </p>
      )}
      {open && entries && entries.length > 0 && (
        <div
          id={menuId}
          ref={menu}
          className="apps-menu-list"
          role="menu"
          aria-label={t('chat.apps')}
          onKeyDown={onKeyDown}
        >
          {entries.map(({ command, application }) => (
            <button
              key={command.id}
              type="button"
              role="menuitem"
              className="ghost small"
              onClick={() => void choose(command)}
            >
              {command.name}
              {application && <span className="hint"> — {application}</span>}
            </button>
          ))}
        </div>
      )}
    </span>
  );
}
