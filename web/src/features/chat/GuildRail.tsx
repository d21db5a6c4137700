import { type CSSProperties, type DragEvent, type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { LiveAnnouncer } from '../../components/LiveAnnouncer.tsx';
import { guildIcon } from '../../lib/media.ts';
import { channelPath, useChat } from './context.ts';
import { Dialog } from './Dialog.tsx';
import { isMuted } from './notifications.tsx';
import {
  dropOnRail,
  joinOnRail,
  placeOnRail,
  type RailTarget,
  type RailThing,
  railFolders,
  stepOnRail,
} from './rail-layout.ts';
import type { GuildFolder, GuildState, RailItem } from './store.ts';

/** Drag data type of the rail's items (only the rail reads it). */
const DRAG_TYPE = 'application/x-hearth-rail';

/** Where over an item a drop lands: its top quarter before it, its bottom quarter after, else into it. */
function dropWhere(event: DragEvent, into: boolean): RailTarget['where'] {
  const box = event.currentTarget.getBoundingClientRect();
  const y = (event.clientY - box.top) / box.height;
  if (!into) return y < 0.5 ? 'before' : 'after';
  return y < 0.25 ? 'before' : y > 0.75 ? 'after' : 'into';
}

/**
 * The column of guilds: home (DMs), the person's guilds and folders of guilds (settings `guild_folders` and
 * `guild_positions`) with unread and mention badges, create. Reordered by dragging (onto another guild's centre:
 * a folder of the two) or from the keyboard with Alt+Shift+Arrow up and down (right: into a folder with the item below) (docs/web.md#the-guild-rail).
 */
export function GuildRail({ activeGuildId }: { activeGuildId: string | null }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<number | string | null>(null);
  const [expanded, setExpanded] = useState<ReadonlySet<number | string>>(new Set());
  const [dragging, setDragging] = useState<RailThing | null>(null);
  const [indicator, setIndicator] = useState<{ key: string; where: RailTarget['where'] } | null>(null);
  const [announce, setAnnounce] = useState({ text: '', sequence: 0 });
  const [error, setError] = useState<unknown>(null);
  const focusAfterMove = useRef<string | null>(null);
  const list = useRef<HTMLUListElement>(null);
  const items = store.railItems();
  const folders = railFolders(items);
  // A moved item is put back in the page (React moves its element, and the focus leaves it): focus it again.
  useEffect(() => {
    const key = focusAfterMove.current;
    if (!key) return;
    focusAfterMove.current = null;
    list.current?.querySelector<HTMLElement>(`[data-rail-key="${CSS.escape(key)}"]`)?.focus();
  });
  const dmMentions = store
    .privateChannels()
    .reduce((sum, channel) => sum + (isMuted(channel.id) ? 0 : (store.mentions.get(channel.id) ?? 0)), 0);
  const go = (to: string) => (event: React.MouseEvent) => {
    event.preventDefault();
    navigate(to);
  };
  const badgeOf = (guildId: string) => (isMuted(guildId) ? { unread: false, mentions: 0 } : store.guildUnread(guildId));
  const nameOf = (thing: RailThing) => {
    if ('guildId' in thing) return store.guilds.get(thing.guildId)?.guild.name ?? '';
    const folder = items.find((item) => item.kind === 'folder' && item.id === thing.folderId);
    return folder?.kind === 'folder' ? folderName(folder) : '';
  };
  const folderName = (folder: Extract<RailItem, { kind: 'folder' }>) =>
    folder.name || folder.guilds.map((g) => g.guild.name).join(', ');
  const save = (next: GuildFolder[] | null, thing: RailThing, byKeyboard: boolean) => {
    if (!next) return;
    setError(null);
    focusAfterMove.current = 'guildId' in thing ? `guild:${thing.guildId}` : `folder:${thing.folderId}`;
    const place = placeOnRail(next, thing);
    // A guild moved by keyboard into a closed folder: the folder opens, so the guild (and the focus) stays.
    const into = place?.folder?.id;
    if (byKeyboard && into !== null && into !== undefined && !expanded.has(into)) {
      setExpanded(new Set(expanded).add(into));
    }
    if (place) {
      const words = place.folder
        ? t('chat.railMovedInFolder', {
            name: nameOf(thing),
            position: place.position,
            count: place.count,
          })
        : t('chat.railMoved', { name: nameOf(thing), position: place.position, count: place.count });
      setAnnounce((previous) => ({ text: words, sequence: previous.sequence + 1 }));
    }
    store.saveRail(next).catch(setError);
  };
  const keys = (thing: RailThing) => (event: React.KeyboardEvent) => {
    if (!event.altKey || !event.shiftKey) return;
    if (event.key === 'ArrowRight' && 'guildId' in thing) {
      event.preventDefault();
      save(joinOnRail(folders, thing.guildId), thing, true);
    } else if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
      event.preventDefault();
      save(stepOnRail(folders, thing, event.key === 'ArrowUp' ? -1 : 1), thing, true);
    }
  };
  const dragProps = (thing: RailThing, target: Omit<RailTarget, 'where'>, into: boolean) => {
    const key = `${target.kind}:${target.id}`;
    return {
      draggable: true,
      onDragStart: (event: DragEvent) => {
        event.stopPropagation();
        event.dataTransfer.setData(DRAG_TYPE, key);
        event.dataTransfer.effectAllowed = 'move';
        setDragging(thing);
      },
      onDragEnd: () => {
        setDragging(null);
        setIndicator(null);
      },
      onDragOver: (event: DragEvent) => {
        if (!dragging) return;
        // A folder does not go into a folder, nor onto the guilds inside one.
        const intoAllowed = into && 'guildId' in dragging;
        event.preventDefault();
        event.stopPropagation();
        event.dataTransfer.dropEffect = 'move';
        const where = dropWhere(event, intoAllowed);
        if (indicator?.key !== key || indicator.where !== where) setIndicator({ key, where });
      },
      onDragLeave: (event: DragEvent) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null) && indicator?.key === key) {
          setIndicator(null);
        }
      },
      onDrop: (event: DragEvent) => {
        if (!dragging) return;
        event.preventDefault();
        event.stopPropagation();
        const where = dropWhere(event, into && 'guildId' in dragging);
        const moved = dragging;
        setDragging(null);
        setIndicator(null);
        save(dropOnRail(folders, moved, { ...target, where }), moved, false);
      },
    };
  };
  const dropClass = (key: string) => (indicator?.key === key ? `drop-${indicator.where}` : '');
  const guildItem = (state: GuildState, inFolder: boolean) => {
    const { guild } = state;
    const { unread, mentions } = badgeOf(guild.id);
    const label = [guild.name, mentions ? t('chat.mentionCount', { count: mentions }) : unread ? t('chat.unread') : '']
      .filter(Boolean)
      .join(', ');
    const last = store.guildChannels(guild.id).find((c) => c.type === 0);
    const to = last ? channelPath(last) : `/channels/${guild.id}`;
    const key = `guild:${guild.id}`;
    const thing = { guildId: guild.id };
    return (
      <li
        key={guild.id}
        className={[unread ? 'has-unread' : '', dropClass(key)].filter(Boolean).join(' ') || undefined}
        {...dragProps(thing, { kind: 'guild', id: guild.id }, true)}
      >
        <a
          href={to}
          className="rail-item"
          data-rail-key={key}
          aria-label={label}
          aria-current={activeGuildId === guild.id ? 'page' : undefined}
          aria-keyshortcuts={
            inFolder
              ? 'Alt+Shift+ArrowUp Alt+Shift+ArrowDown'
              : 'Alt+Shift+ArrowUp Alt+Shift+ArrowDown Alt+Shift+ArrowRight'
          }
          title={guild.name}
          onClick={go(to)}
          onKeyDown={keys(thing)}
          draggable={false}
        >
          {/* The picture stands for the guild here: it carries the guild's name. */}
          <Avatar
            source={guildIcon(guild)}
            name={guild.name}
            size={inFolder ? 40 : 48}
            labelled
            className="rail-picture"
          />
          {mentions > 0 && (
            <span className="badge" aria-hidden="true">
              {mentions}
            </span>
          )}
        </a>
      </li>
    );
  };
  const folderItem = (folder: Extract<RailItem, { kind: 'folder' }>) => {
    const open = expanded.has(folder.id);
    const badges = folder.guilds.map((g) => badgeOf(g.guild.id));
    const mentions = badges.reduce((sum, badge) => sum + badge.mentions, 0);
    const unread = badges.some((badge) => badge.unread);
    const label = [
      t('chat.folder', { name: folderName(folder) }),
      mentions ? t('chat.mentionCount', { count: mentions }) : unread ? t('chat.unread') : '',
    ]
      .filter(Boolean)
      .join(', ');
    const key = `folder:${folder.id}`;
    const thing = { folderId: folder.id };
    const colour = folder.color === null ? undefined : `#${folder.color.toString(16).padStart(6, '0')}`;
    return (
      <li
        key={key}
        className={['rail-folder', unread && !open ? 'has-unread' : '', dropClass(key)].filter(Boolean).join(' ')}
        style={colour ? ({ '--folder-color': colour } as CSSProperties) : undefined}
      >
        <div {...dragProps(thing, { kind: 'folder', id: folder.id }, true)}>
          <button
            type="button"
            className="rail-item folder"
            data-rail-key={key}
            aria-label={label}
            aria-expanded={open}
            aria-keyshortcuts="Alt+Shift+ArrowUp Alt+Shift+ArrowDown"
            title={folderName(folder)}
            onKeyDown={keys(thing)}
            onClick={() =>
              setExpanded((previous) => {
                const next = new Set(previous);
                if (open) next.delete(folder.id);
                else next.add(folder.id);
                return next;
              })
            }
          >
            {open ? (
              <span aria-hidden="true" className="folder-open">
                ▾
              </span>
            ) : (
              <span aria-hidden="true" className="folder-icons">
                {folder.guilds.slice(0, 4).map((g) => (
                  <Avatar key={g.guild.id} source={guildIcon(g.guild)} name={g.guild.name} size={20} />
                ))}
              </span>
            )}
            {mentions > 0 && (
              <span className="badge" aria-hidden="true">
                {mentions}
              </span>
            )}
          </button>
        </div>
        {open && (
          <ul aria-label={folderName(folder)}>
            {folder.guilds.map((g) => guildItem(g, true))}
            <li>
              <button
                type="button"
                className="rail-item folder-edit"
                aria-label={t('chat.folderSettings', { name: folderName(folder) })}
                title={t('chat.folderSettings', { name: folderName(folder) })}
                onClick={() => setEditing(folder.id)}
              >
                <span aria-hidden="true">✎</span>
              </button>
            </li>
          </ul>
        )}
      </li>
    );
  };
  const editingFolder = items.find((item) => item.kind === 'folder' && item.id === editing);
  return (
    <nav className={dragging ? 'rail dragging' : 'rail'} aria-label={t('chat.servers')}>
      <ul ref={list}>
        <li>
          <a
            href="/channels/@me"
            className="rail-item home"
            aria-current={activeGuildId === null ? 'page' : undefined}
            aria-label={dmMentions ? t('chat.homeWithMentions', { count: dmMentions }) : t('chat.home')}
            onClick={go('/channels/@me')}
          >
            <span aria-hidden="true">⌂</span>
            {dmMentions > 0 && (
              <span className="badge" aria-hidden="true">
                {dmMentions}
              </span>
            )}
          </a>
        </li>
        {items.map((item) => (item.kind === 'guild' ? guildItem(item.guild, false) : folderItem(item)))}
        <li>
          <button
            type="button"
            className="rail-item add"
            aria-label={t('chat.createServer')}
            title={t('chat.createServer')}
            onClick={() => setCreating(true)}
          >
            <span aria-hidden="true">+</span>
          </button>
        </li>
      </ul>
      <ErrorNotice error={error} />
      <LiveAnnouncer text={announce.text} sequence={announce.sequence} />
      {creating && <CreateGuildDialog onClose={() => setCreating(false)} />}
      {editingFolder?.kind === 'folder' && (
        <FolderDialog
          folder={editingFolder}
          onClose={() => setEditing(null)}
          onSave={(name, color) => {
            const next = folders.map((entry) => (entry.id === editingFolder.id ? { ...entry, name, color } : entry));
            setEditing(null);
            return store.saveRail(next);
          }}
        />
      )}
    </nav>
  );
}

/** The colours a folder can have (its ring on the rail). */
const FOLDER_COLOURS: Record<string, number | null> = {
  none: null,
  blue: 0x5865f2,
  green: 0x3ba55c,
  yellow: 0xfaa61a,
  red: 0xed4245,
  purple: 0x9b59b6,
};

function FolderDialog({
  folder,
  onClose,
  onSave,
}: {
  folder: Extract<RailItem, { kind: 'folder' }>;
  onClose: () => void;
  onSave: (name: string | null, color: number | null) => Promise<void>;
}) {
  const { t } = useTranslation();
  const [name, setName] = useState(folder.name ?? '');
  const [colour, setColour] = useState(
    Object.entries(FOLDER_COLOURS).find(([, value]) => value === folder.color)?.[0] ?? 'none',
  );
  const [error, setError] = useState<unknown>(null);
  const colourId = useId();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSave(name.trim() || null, FOLDER_COLOURS[colour] ?? null).catch(setError);
  };
  return (
    <Dialog title={t('chat.folderSettingsTitle')} onClose={onClose}>
      <form onSubmit={submit}>
        <Field
          label={t('chat.folderName')}
          data-autofocus
          value={name}
          onChange={(e) => setName(e.target.value)}
          maxLength={100}
        />
        <div className="field">
          <label htmlFor={colourId}>{t('chat.folderColour')}</label>
          <select id={colourId} value={colour} onChange={(e) => setColour(e.target.value)}>
            {Object.keys(FOLDER_COLOURS).map((key) => (
              <option key={key} value={key}>
                {t(`chat.folderColours.${key}`)}
              </option>
            ))}
          </select>
        </div>
        <ErrorNotice error={error} />
        <Button type="submit">{t('chat.saveFolder')}</Button>
      </form>
    </Dialog>
  );
}

function CreateGuildDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const guild = await store.api.createGuild(name.trim());
      onClose();
      navigate(guild.system_channel_id ? `/channels/${guild.id}/${guild.system_channel_id}` : `/channels/${guild.id}`);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  return (
    <Dialog title={t('chat.createServer')} onClose={onClose}>
      <form onSubmit={submit}>
        <Field
          label={t('chat.serverName')}
          data-autofocus
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
        />
        <ErrorNotice error={error} />
        <Button type="submit" busy={busy} disabled={!name.trim()}>
          {t('chat.create')}
        </Button>
      </form>
    </Dialog>
  );
}
