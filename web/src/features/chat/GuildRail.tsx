import { type CSSProperties, type DragEvent, type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { LiveAnnouncer } from '../../components/LiveAnnouncer.tsx';
import { guildIcon } from '../../lib/media.ts';
import { InviteDialog } from './ChannelSidebar.tsx';
import { channelPath, useChat } from './context.ts';
import { Dialog } from './Dialog.tsx';
import { allowedSections } from './guild-settings/sections.ts';
import { isMuted, setMuted } from './notifications.tsx';
import { has, P } from './permissions.ts';
import { ContextMenu, type MenuEntry, type MenuPlace, menuPlace } from './RailMenu.tsx';
import {
  dropOnRail,
  joinOnRail,
  placeOnRail,
  type RailTarget,
  type RailThing,
  railFolders,
  stepOnRail,
  ungroupOnRail,
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

/** The keys that open a rail item's context menu, besides a right click (the WAI-ARIA menu pattern's). */
const MENU_KEYS = 'Shift+F10 ContextMenu';

/**
 * The column of guilds: home (DMs), the person's guilds and folders of guilds (settings `guild_folders` and
 * `guild_positions`) with unread and mention badges, create. Reordered by dragging (onto another guild's centre:
 * a folder of the two) or from the keyboard with Alt+Shift+Arrow up and down (right: into a folder with the item below) (docs/web.md#the-guild-rail).
 * Each guild and folder has a context menu (right click, Shift+F10 or the ContextMenu key) with what can be done
 * to it (docs/web.md#the-guild-rail).
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
  const [menu, setMenu] = useState<{ thing: RailThing; key: string; place: MenuPlace } | null>(null);
  const [inviting, setInviting] = useState<string | null>(null);
  const [leaving, setLeaving] = useState<string | null>(null);
  const focusAfterMove = useRef<string | null>(null);
  /** The rail item a dialog was opened from (its menu): the focus goes back to it when the dialog closes. */
  const dialogFrom = useRef<string | null>(null);
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
    .reduce((sum, channel) => sum + (isMuted(store, channel.id) ? 0 : (store.mentions.get(channel.id) ?? 0)), 0);
  const go = (to: string) => (event: React.MouseEvent) => {
    event.preventDefault();
    navigate(to);
  };
  const badgeOf = (guildId: string) =>
    isMuted(store, guildId) ? { unread: false, mentions: 0 } : store.guildUnread(guildId);
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
  const say = (text: string) => setAnnounce((previous) => ({ text, sequence: previous.sequence + 1 }));
  const keyOf = (thing: RailThing) => ('guildId' in thing ? `guild:${thing.guildId}` : `folder:${thing.folderId}`);
  const focusItem = (key: string) =>
    list.current?.querySelector<HTMLElement>(`[data-rail-key="${CSS.escape(key)}"]`)?.focus();
  const openMenu = (thing: RailThing) => (event: React.MouseEvent) => {
    event.preventDefault();
    setMenu({ thing, key: keyOf(thing), place: menuPlace(event.currentTarget, event) });
  };
  const keys = (thing: RailThing) => (event: React.KeyboardEvent) => {
    if (event.key === 'ContextMenu' || (event.shiftKey && !event.altKey && event.key === 'F10')) {
      // The browser would follow with a contextmenu event (and its own menu): this one is opened here.
      event.preventDefault();
      setMenu({ thing, key: keyOf(thing), place: menuPlace(event.currentTarget) });
      return;
    }
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
    const muted = isMuted(store, guild.id);
    const label = [
      guild.name,
      mentions ? t('chat.mentionCount', { count: mentions }) : unread ? t('chat.unread') : '',
      muted ? t('chat.muted') : '',
    ]
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
              ? `Alt+Shift+ArrowUp Alt+Shift+ArrowDown ${MENU_KEYS}`
              : `Alt+Shift+ArrowUp Alt+Shift+ArrowDown Alt+Shift+ArrowRight ${MENU_KEYS}`
          }
          title={guild.name}
          onClick={go(to)}
          onContextMenu={openMenu(thing)}
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
    // Closed, the folder stands for its guilds: the one on screen inside it shows on the folder.
    const current = !open && folder.guilds.some((g) => g.guild.id === activeGuildId);
    const label = [
      t('chat.folder', { name: folderName(folder) }),
      mentions ? t('chat.mentionCount', { count: mentions }) : unread ? t('chat.unread') : '',
      current ? t('chat.folderHasCurrent') : '',
    ]
      .filter(Boolean)
      .join(', ');
    const key = `folder:${folder.id}`;
    const thing = { folderId: folder.id };
    const colour = folder.color === null ? undefined : `#${folder.color.toString(16).padStart(6, '0')}`;
    return (
      <li
        key={key}
        className={['rail-folder', unread && !open ? 'has-unread' : '', current ? 'has-current' : '', dropClass(key)]
          .filter(Boolean)
          .join(' ')}
        style={colour ? ({ '--folder-color': colour } as CSSProperties) : undefined}
      >
        <div {...dragProps(thing, { kind: 'folder', id: folder.id }, true)}>
          <button
            type="button"
            className="rail-item folder"
            data-rail-key={key}
            aria-label={label}
            aria-expanded={open}
            aria-current={current ? 'true' : undefined}
            aria-keyshortcuts={`Alt+Shift+ArrowUp Alt+Shift+ArrowDown ${MENU_KEYS}`}
            title={folderName(folder)}
            onKeyDown={keys(thing)}
            onContextMenu={openMenu(thing)}
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
  // A closing dialog is taken out of the page after this render: the focus goes back once it is gone (while
  // it is open, the rest of the page is inert and cannot take it).
  const backFromDialog = (fallback: string | null = null) => {
    focusAfterMove.current = dialogFrom.current ?? fallback;
    dialogFrom.current = null;
  };
  const editingFolder = items.find((item) => item.kind === 'folder' && item.id === editing);
  /** The channel an invite from the rail is for: the system channel, else the first text channel. */
  const inviteChannelOf = (guildId: string) => {
    const state = store.guilds.get(guildId);
    const channels = store.guildChannels(guildId);
    const id = state?.guild.system_channel_id ?? channels.find((c) => c.type === 0)?.id;
    const channel = id ? store.channels.get(id) : undefined;
    return channel && has(store.permissions(channel), P.CREATE_INSTANT_INVITE) ? channel.id : null;
  };
  const guildEntries = (guildId: string): MenuEntry[] => {
    const state = store.guilds.get(guildId);
    if (!state) return [];
    const muted = isMuted(store, guildId);
    const invite = inviteChannelOf(guildId);
    const entries: (MenuEntry | false)[] = [
      { label: t('chat.markAsRead'), run: () => void store.markGuildsRead([guildId]).catch(setError) },
      {
        label: muted ? t('chat.unmuteServer') : t('chat.muteServer'),
        run: () => void setMuted(store, guildId, !muted).catch(setError),
      },
      !!invite && { label: t('chat.invitePeople'), run: () => setInviting(invite) },
      allowedSections(store.permissions(undefined, guildId)).length > 0 && {
        label: t('guildSettings.open'),
        run: () => navigate(`/channels/${guildId}/settings`),
      },
      {
        label: t('chat.copyServerId'),
        run: () => {
          setError(null);
          void navigator.clipboard.writeText(guildId).then(() => say(t('chat.serverIdCopied')), setError);
        },
      },
      // The owner cannot leave (the server refuses): the guild is transferred or deleted in its settings.
      state.guild.owner_id !== store.me && {
        label: t('chat.leaveServer'),
        danger: true,
        run: () => setLeaving(guildId),
      },
    ];
    return entries.filter((entry): entry is MenuEntry => entry !== false);
  };
  const folderEntries = (folderId: number | string): MenuEntry[] => {
    const folder = items.find((item) => item.kind === 'folder' && item.id === folderId);
    if (folder?.kind !== 'folder') return [];
    return [
      {
        label: t('chat.markFolderRead'),
        run: () => void store.markGuildsRead(folder.guilds.map((g) => g.guild.id)).catch(setError),
      },
      { label: t('chat.folderSettingsTitle'), run: () => setEditing(folder.id) },
      {
        label: t('chat.ungroupFolder'),
        run: () => {
          const next = ungroupOnRail(folders, folder.id);
          const first = folder.guilds[0];
          if (!next || !first) return;
          setError(null);
          focusAfterMove.current = `guild:${first.guild.id}`;
          say(t('chat.folderUngrouped', { name: folderName(folder) }));
          store.saveRail(next).catch(setError);
        },
      },
    ];
  };
  const menuEntries = menu
    ? 'guildId' in menu.thing
      ? guildEntries(menu.thing.guildId)
      : folderEntries(menu.thing.folderId)
    : [];
  const leavingGuild = leaving ? store.guilds.get(leaving) : undefined;
  return (
    <nav className={dragging ? 'rail dragging' : 'rail'} aria-label={t('chat.servers')}>
      <ul ref={list}>
        <li>
          <a
            href="/channels/@me"
            className="rail-item home"
            data-rail-key="home"
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
      {menu && menuEntries.length > 0 && (
        <ContextMenu
          label={t('chat.railMenu', { name: nameOf(menu.thing) })}
          place={menu.place}
          entries={menuEntries.map((entry) => ({
            ...entry,
            run: () => {
              dialogFrom.current = menu.key;
              entry.run();
            },
          }))}
          onClose={(refocus) => {
            setMenu(null);
            if (refocus) focusItem(menu.key);
          }}
        />
      )}
      {inviting && (
        <InviteDialog
          channelId={inviting}
          onClose={() => {
            setInviting(null);
            backFromDialog();
          }}
        />
      )}
      {leavingGuild && (
        <LeaveGuildDialog
          name={leavingGuild.guild.name}
          onClose={() => {
            setLeaving(null);
            backFromDialog();
          }}
          onLeave={async () => {
            const id = leavingGuild.guild.id;
            await store.api.leaveGuild(id);
            setLeaving(null);
            // The guild's item is gone: the focus goes to the top of the rail.
            dialogFrom.current = 'home';
            backFromDialog();
            if (activeGuildId === id) navigate('/channels/@me');
            say(t('chat.leftServer', { name: leavingGuild.guild.name }));
          }}
        />
      )}
      {creating && <CreateGuildDialog onClose={() => setCreating(false)} />}
      {editingFolder?.kind === 'folder' && (
        <FolderDialog
          folder={editingFolder}
          onClose={() => {
            setEditing(null);
            backFromDialog(`folder:${editingFolder.id}`);
          }}
          onSave={(name, color) => {
            const next = folders.map((entry) => (entry.id === editingFolder.id ? { ...entry, name, color } : entry));
            setEditing(null);
            backFromDialog(`folder:${editingFolder.id}`);
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

/** "Leave server" asks first: coming back needs a new invite. */
function LeaveGuildDialog({
  name,
  onClose,
  onLeave,
}: {
  name: string;
  onClose: () => void;
  onLeave: () => Promise<void>;
}) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const leave = () => {
    setBusy(true);
    setError(null);
    onLeave().catch((caught: unknown) => {
      setError(caught);
      setBusy(false);
    });
  };
  return (
    <Dialog title={t('chat.leaveTitle', { name })} onClose={onClose}>
      <p>{t('chat.leaveBody')}</p>
      <ErrorNotice error={error} />
      <div className="actions">
        <Button variant="danger" busy={busy} onClick={leave}>
          {t('chat.leaveConfirm', { name })}
        </Button>
        <Button variant="secondary" data-autofocus onClick={onClose}>
          {t('common.cancel')}
        </Button>
      </div>
    </Dialog>
  );
}

/** The code of an invite link (…/invite/CODE, any host) or of a bare code; null for anything else. */
export function inviteCode(text: string): string | null {
  const value = text.trim();
  const match = /(?:^|\/invite\/)([A-Za-z0-9-]{2,32})\/?$/.exec(value);
  if (!match) return null;
  return value.includes('/') && !value.includes('/invite/') ? null : (match[1] ?? null);
}

function CreateGuildDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [name, setName] = useState('');
  const [invite, setInvite] = useState('');
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
      {/* Joining sits beside creating, as in the clients people know: a pasted link or code opens its page. */}
      <form
        className="join-with-invite"
        onSubmit={(event) => {
          event.preventDefault();
          const code = inviteCode(invite);
          if (!code) return;
          onClose();
          navigate(`/invite/${code}`);
        }}
      >
        <p className="popout-heading">{t('chat.haveInvite')}</p>
        <Field label={t('chat.inviteLinkOrCode')} value={invite} onChange={(e) => setInvite(e.target.value)} />
        <Button type="submit" variant="secondary" disabled={!inviteCode(invite)}>
          {t('chat.joinServer')}
        </Button>
      </form>
    </Dialog>
  );
}
