import { type FormEvent, type MouseEvent, memo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel } from '../../api/chat-types.ts';
import { ChannelType } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { canOpenAdmin } from '../../lib/acl.ts';
import { groupDmIcon, guildIcon, userAvatar } from '../../lib/media.ts';
import { channelPath, useChat, useChatStore, useChatT } from './context.ts';
import { Dialog } from './Dialog.tsx';
import { allowedSections } from './guild-settings/sections.ts';
import { NotificationSettings } from './NotificationSettings.tsx';
import { isCollapsed, isMuted, setCollapsed } from './notifications.tsx';
import { has, P } from './permissions.ts';

/** The second column: a guild's channels by category, or the DM list; the signed-in person at the bottom. */
export function ChannelSidebar({ guildId, channelId }: { guildId: string | null; channelId: string | null }) {
  const { t } = useTranslation();
  const store = useChat();
  const guild = guildId ? store.guilds.get(guildId) : undefined;
  return (
    <nav
      className="sidebar"
      aria-label={guild ? t('chat.channelsOf', { name: guild.guild.name }) : t('chat.directMessages')}
    >
      {guild ? <GuildChannels guildId={guild.guild.id} channelId={channelId} /> : <DmList channelId={channelId} />}
      <UserArea />
    </nav>
  );
}

/**
 * A channel's link, computed by the list on each store change; the link itself re-renders only when what it
 * shows changes (500 links re-rendered on every change, a page of history loading included, were most of the
 * cost of scrolling back in a big guild: docs/performance.md#the-chat-view-at-scale).
 */
function ChannelLink({ channel, active }: { channel: Channel; active: boolean }) {
  const store = useChatStore();
  const muted = isMuted(store, channel.id);
  // A one-to-one conversation shows the other person's picture; a group its icon, else its initials.
  const otherUser = store.dmPartner(channel);
  return (
    <ChannelLinkView
      id={channel.id}
      to={channelPath(channel)}
      inGuild={!!channel.guild_id}
      voice={channel.type === ChannelType.Voice}
      name={store.channelLabel(channel)}
      dmUserId={otherUser?.id}
      dmAvatar={otherUser?.avatar}
      groupIcon={channel.type === ChannelType.GroupDM ? channel.icon : undefined}
      active={active}
      muted={muted}
      unread={!muted && !active && store.isUnread(channel)}
      mentions={muted ? 0 : (store.mentions.get(channel.id) ?? 0)}
    />
  );
}

const ChannelLinkView = memo(function ChannelLinkView({
  id,
  to,
  inGuild,
  voice,
  name,
  dmUserId,
  dmAvatar,
  groupIcon,
  active,
  muted,
  unread,
  mentions,
}: {
  id: string;
  to: string;
  inGuild: boolean;
  voice: boolean;
  name: string;
  /** A one-to-one conversation's other person, and their avatar hash (primitives, so the memo holds). */
  dmUserId: string | undefined;
  dmAvatar: string | null | undefined;
  /** A group conversation's icon hash. */
  groupIcon: string | null | undefined;
  active: boolean;
  muted: boolean;
  unread: boolean;
  mentions: number;
}) {
  const t = useChatT();
  const { navigate } = useApp();
  const label = [
    voice ? t('chat.voiceChannelNamed', { name }) : inGuild ? `#${name}` : name,
    mentions ? t('chat.mentionCount', { count: mentions }) : unread ? t('chat.unread') : '',
    muted ? t('chat.muted') : '',
  ]
    .filter(Boolean)
    .join(', ');
  return (
    <a
      href={to}
      data-channel-id={id}
      className={`channel-link${unread ? ' unread' : ''}${muted ? ' muted' : ''}`}
      aria-current={active ? 'page' : undefined}
      aria-label={label}
      onClick={(event: MouseEvent) => {
        event.preventDefault();
        navigate(to);
      }}
    >
      {inGuild ? (
        <span className="channel-icon" aria-hidden="true">
          {voice ? '🔊' : '#'}
        </span>
      ) : (
        <Avatar
          source={dmUserId ? userAvatar({ id: dmUserId, avatar: dmAvatar }) : groupDmIcon({ id, icon: groupIcon })}
          name={name}
          size={24}
        />
      )}
      <span className="channel-name">{name}</span>
      {/* The space keeps the visible text "general 3", words the name "#general, 3 mentions" contains (axe's
          label-content-name-mismatch); the flex layout does not draw it. */}
      {mentions > 0 && ' '}
      {mentions > 0 && (
        <span className="badge" aria-hidden="true">
          {mentions}
        </span>
      )}
    </a>
  );
});

function GuildChannels({ guildId, channelId }: { guildId: string; channelId: string | null }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const state = store.guilds.get(guildId);
  const [dialog, setDialog] = useState<'channel' | 'invite' | 'notifications' | null>(null);
  if (!state) return null;
  const channels = store.guildChannels(guildId);
  const categories = channels.filter((c) => c.type === ChannelType.Category);
  const loose = channels.filter((c) => c.type !== ChannelType.Category && !c.parent_id);
  const perms = store.permissions(undefined, guildId);
  const canManage = has(perms, P.MANAGE_CHANNELS);
  const canSettings = allowedSections(perms).length > 0;
  const inviteChannel = channelId ?? state.guild.system_channel_id ?? channels.find((c) => c.type === 0)?.id;
  const canInvite =
    !!inviteChannel && has(store.permissions(store.channels.get(inviteChannel)), P.CREATE_INSTANT_INVITE);
  const list = (items: Channel[]) => (
    <ul className="channel-list">
      {items.map((channel) => (
        <li key={channel.id}>
          <ChannelLink channel={channel} active={channel.id === channelId} />
        </li>
      ))}
    </ul>
  );
  return (
    <div className="sidebar-body">
      <div className="sidebar-head">
        <h2 className="sidebar-title">
          <Avatar source={guildIcon(state.guild)} name={state.guild.name} size={24} />
          {state.guild.name}
        </h2>
        {canInvite && (
          <button type="button" className="ghost small" onClick={() => setDialog('invite')}>
            {t('chat.invitePeople')}
          </button>
        )}
        {canSettings && (
          <a
            href={`/channels/${guildId}/settings`}
            className="settings-link"
            onClick={(event: MouseEvent) => {
              event.preventDefault();
              navigate(`/channels/${guildId}/settings`);
            }}
          >
            {t('guildSettings.open')}
          </a>
        )}
        <button type="button" className="ghost small" aria-haspopup="dialog" onClick={() => setDialog('notifications')}>
          {t('chat.serverNotifications')}
          {isMuted(store, guildId) && `, ${t('chat.muted')}`}
        </button>
        {canManage && (
          <button type="button" className="ghost small" onClick={() => setDialog('channel')}>
            {t('chat.createChannel')}
          </button>
        )}
      </div>
      <div className="sidebar-scroll">
        {list(loose)}
        {categories.map((category) => {
          const children = channels.filter((c) => c.parent_id === category.id && c.type !== ChannelType.Category);
          // Kept on the server as the category's override (`collapsed`): folded on every device and after a reload.
          const open = !isCollapsed(store, category.id);
          return (
            <section key={category.id} className="category" aria-label={category.name ?? ''}>
              <h3>
                <button
                  type="button"
                  className="category-toggle"
                  aria-expanded={open}
                  onClick={() => {
                    void setCollapsed(store, category.id, open).catch(() => undefined);
                  }}
                >
                  {category.name}
                </button>
              </h3>
              {open ? list(children) : list(children.filter((c) => c.id === channelId))}
            </section>
          );
        })}
      </div>
      {dialog === 'channel' && (
        <CreateChannelDialog guildId={guildId} categories={categories} onClose={() => setDialog(null)} />
      )}
      {dialog === 'notifications' && (
        <NotificationSettings id={guildId} name={state.guild.name} onClose={() => setDialog(null)} />
      )}
      {dialog === 'invite' && inviteChannel && (
        <InviteDialog channelId={inviteChannel} onClose={() => setDialog(null)} />
      )}
    </div>
  );
}

function CreateChannelDialog({
  guildId,
  categories,
  onClose,
}: {
  guildId: string;
  categories: Channel[];
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [name, setName] = useState('');
  const [type, setType] = useState<number>(ChannelType.Text);
  const [parent, setParent] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    try {
      const channel = await store.api.createChannel(guildId, {
        name: type === ChannelType.Text ? name.trim().toLowerCase().replace(/\s+/g, '-') : name.trim(),
        type,
        ...(parent && type !== ChannelType.Category ? { parent_id: parent } : {}),
      });
      onClose();
      if (channel.type !== ChannelType.Category) navigate(channelPath({ ...channel, guild_id: guildId }));
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  const types: [number, string][] = [
    [ChannelType.Text, t('chat.textChannel')],
    [ChannelType.Voice, t('chat.voiceChannel')],
    [ChannelType.Category, t('chat.category')],
  ];
  return (
    <Dialog title={t('chat.createChannel')} onClose={onClose}>
      <form onSubmit={submit}>
        <fieldset className="choices">
          <legend>{t('chat.channelType')}</legend>
          {types.map(([value, label]) => (
            <label key={value}>
              <input type="radio" name="type" checked={type === value} onChange={() => setType(value)} /> {label}
            </label>
          ))}
        </fieldset>
        <Field
          label={t('chat.channelName')}
          data-autofocus
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
        />
        {type !== ChannelType.Category && categories.length > 0 && (
          <div className="field">
            <label htmlFor="channel-parent">{t('chat.category')}</label>
            <select id="channel-parent" value={parent} onChange={(e) => setParent(e.target.value)}>
              <option value="">{t('chat.noCategory')}</option>
              {categories.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          </div>
        )}
        <ErrorNotice error={error} />
        <Button type="submit" busy={busy} disabled={!name.trim()}>
          {t('chat.create')}
        </Button>
      </form>
    </Dialog>
  );
}

export function InviteDialog({ channelId, onClose }: { channelId: string; onClose: () => void }) {
  const { t } = useTranslation();
  const store = useChat();
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [copied, setCopied] = useState(false);
  const [started, setStarted] = useState(false);
  if (!started) {
    setStarted(true);
    store.api.createInvite(channelId).then(
      (invite) => setLink(`${window.location.origin}/invite/${invite.code}`),
      (caught: unknown) => setError(caught),
    );
  }
  return (
    <Dialog title={t('chat.invitePeople')} onClose={onClose}>
      <ErrorNotice error={error} />
      {link ? (
        <>
          <Field label={t('chat.inviteLink')} value={link} readOnly onFocus={(e) => e.currentTarget.select()} />
          <Button
            onClick={() => {
              void navigator.clipboard?.writeText(link).then(() => setCopied(true));
            }}
          >
            {copied ? t('chat.copied') : t('chat.copyLink')}
          </Button>
          <p className="hint">{t('chat.inviteExpires')}</p>
        </>
      ) : (
        !error && <p role="status">{t('app.loading')}</p>
      )}
    </Dialog>
  );
}

function DmList({ channelId }: { channelId: string | null }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [group, setGroup] = useState(false);
  return (
    <div className="sidebar-body">
      <div className="sidebar-head">
        <a
          href="/channels/@me"
          className="channel-link"
          aria-current={channelId === null ? 'page' : undefined}
          onClick={(event) => {
            event.preventDefault();
            navigate('/channels/@me');
          }}
        >
          <span className="channel-icon" aria-hidden="true">
            👥
          </span>
          {t('chat.friends')}
        </a>
      </div>
      <div className="sidebar-scroll">
        <div className="sidebar-row">
          <h2 className="sidebar-subtitle">{t('chat.directMessages')}</h2>
          <button type="button" className="ghost small" onClick={() => setGroup(true)}>
            {t('chat.newGroup')}
          </button>
        </div>
        <ul className="channel-list">
          {store.privateChannels().map((channel) => (
            <li key={channel.id}>
              <ChannelLink channel={channel} active={channel.id === channelId} />
            </li>
          ))}
        </ul>
      </div>
      {group && <GroupDmDialog onClose={() => setGroup(false)} />}
    </div>
  );
}

function GroupDmDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const friends = [...store.relationships.values()].filter((r) => r.type === 1);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    try {
      const ids = [...chosen];
      const channel = ids.length === 1 ? await store.api.openDm(ids[0] as string) : await store.api.openGroupDm(ids);
      onClose();
      navigate(channelPath(channel));
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  return (
    <Dialog title={t('chat.newGroup')} onClose={onClose}>
      <form onSubmit={submit}>
        {friends.length === 0 ? (
          <p>{t('chat.empty.all')}</p>
        ) : (
          <fieldset className="friend-picker">
            <legend>{t('chat.pickFriends')}</legend>
            {friends.map((r) => (
              <label key={r.id}>
                <input
                  type="checkbox"
                  checked={chosen.has(r.id)}
                  onChange={(e) => {
                    const next = new Set(chosen);
                    if (e.target.checked) next.add(r.id);
                    else next.delete(r.id);
                    setChosen(next);
                  }}
                />{' '}
                {r.user.global_name ?? r.user.username}
              </label>
            ))}
          </fieldset>
        )}
        <ErrorNotice error={error} />
        <Button type="submit" busy={busy} disabled={chosen.size === 0}>
          {t('chat.startConversation')}
        </Button>
      </form>
    </Dialog>
  );
}

/** An icon link of the user area to another page of the app, named for screen readers and on hover. */
function PageLink({ href, label, icon }: { href: string; label: string; icon: string }) {
  const { navigate } = useApp();
  return (
    <a
      href={href}
      className="ghost icon"
      aria-label={label}
      title={label}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {icon}
    </a>
  );
}

/** The signed-in person, and the way out of the chat: settings, the developer portal, the admin panel (to
 * accounts that may open it) and signing out. */
function UserArea() {
  const { t } = useTranslation();
  const { api, user, signOutLocally } = useApp();
  if (!user) return null;
  return (
    <div className="user-area">
      <Avatar source={userAvatar(user)} name={user.global_name ?? user.username} size={32} />
      <span className="user-names">
        <span className="user-name">{user.global_name ?? user.username}</span>
        <span className="user-handle">{user.username}</span>
      </span>
      <PageLink href="/settings" label={t('chat.settings')} icon="⚙" />
      <PageLink href="/developers" label={t('chat.developerPortal')} icon="</>" />
      {canOpenAdmin(user) && <PageLink href="/admin" label={t('chat.adminPanel')} icon="⛨" />}
      <button
        type="button"
        className="ghost icon"
        aria-label={t('common.signOut')}
        title={t('common.signOut')}
        onClick={() => {
          void api.auth
            .logout()
            .catch(() => undefined)
            .finally(signOutLocally);
        }}
      >
        ⏻
      </button>
    </div>
  );
}
