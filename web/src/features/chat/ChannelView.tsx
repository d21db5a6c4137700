import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Message } from '../../api/chat-types.ts';
import { ChannelType } from '../../api/chat-types.ts';
import { Avatar } from '../../components/Avatar.tsx';
import { groupDmIcon, userAvatar } from '../../lib/media.ts';
import { DmCallButton, DmCallPanel } from '../voice/DmCall.tsx';
import { VoiceView } from '../voice/VoiceView.tsx';
import { Composer } from './Composer.tsx';
import { useChat } from './context.ts';
import { GroupDmSettings } from './GroupDmSettings.tsx';
import { MessageList } from './MessageList.tsx';
import { NotificationSettings } from './NotificationSettings.tsx';
import { isMuted, titleCount } from './notifications.tsx';
import { PinsDialog } from './PinsDialog.tsx';
import { has, P } from './permissions.ts';
import { SearchBox, scopeOf } from './Search.tsx';

/** One channel: header (name, topic, actions), history, typing line and composer; voice channels get a slot. */
export function ChannelView({
  channel,
  focusMessageId,
  onOpenNav,
  membersOpen,
  onToggleMembers,
}: {
  channel: Channel;
  /** A message link (`/channels/…/{message_id}`): scroll to it and highlight it. */
  focusMessageId: string | null;
  onOpenNav: () => void;
  membersOpen: boolean;
  onToggleMembers: (() => void) | undefined;
}) {
  const { t } = useTranslation();
  const store = useChat();
  const [replyTo, setReplyTo] = useState<Message | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [pins, setPins] = useState(false);
  const [groupSettings, setGroupSettings] = useState(false);
  const [notifications, setNotifications] = useState(false);
  const name = store.channelLabel(channel);
  const dm = !channel.guild_id;
  const title = dm ? name : `#${name}`;
  const perms = store.permissions(channel);
  const voice = channel.type === ChannelType.Voice;
  const unread = titleCount(store);
  const muted = isMuted(store, channel.id);

  useEffect(() => {
    document.title = `${unread ? `(${unread}) ` : ''}${title} · ${t('app.name')}`;
  }, [title, unread, t]);

  useEffect(() => {
    if (!voice) void store.open(channel.id);
  }, [channel.id, store, voice]);

  const notificationsLabel = `${dm ? t('chat.conversationNotifications') : t('chat.channelNotifications')}${
    muted ? `, ${t('chat.muted')}` : ''
  }`;
  return (
    <div className="channel-view">
      <header className="channel-header">
        <button type="button" className="ghost nav-toggle" onClick={onOpenNav} aria-label={t('chat.openNavigation')}>
          ☰
        </button>
        <h1>
          {dm ? (
            <DmPicture channel={channel} name={name} />
          ) : (
            <span className="channel-icon" aria-hidden="true">
              {voice ? '🔊' : '#'}
            </span>
          )}
          <span className="visually-hidden">{voice ? t('chat.voiceChannelNamed', { name }) : title}</span>
          <span aria-hidden="true">{name}</span>
        </h1>
        {channel.topic && <p className="topic">{channel.topic}</p>}
        <div className="header-actions">
          {dm && <DmCallButton channel={channel} />}
          {!voice && <SearchBox scope={scopeOf(channel)} />}
          {/* Not "Mute": a voice channel's own controls have the microphone's "Mute", and the two must not share
              a name. */}
          {/* Icons, named for assistive technology and in a tooltip, as in the clients people know (words took
              three rows of a phone's header). */}
          <button
            type="button"
            className="ghost icon"
            aria-haspopup="dialog"
            aria-label={notificationsLabel}
            title={notificationsLabel}
            onClick={() => setNotifications(true)}
          >
            <span aria-hidden="true">{muted ? '🔕' : '🔔'}</span>
          </button>
          {!voice && (
            <button
              type="button"
              className="ghost icon"
              aria-label={t('chat.pinnedMessages')}
              title={t('chat.pinnedMessages')}
              onClick={() => setPins(true)}
            >
              <span aria-hidden="true">📌</span>
            </button>
          )}
          {channel.type === ChannelType.GroupDM && (
            <button
              type="button"
              className="ghost icon"
              aria-label={t('chat.groupSettings')}
              title={t('chat.groupSettings')}
              onClick={() => setGroupSettings(true)}
            >
              <span aria-hidden="true">⚙</span>
            </button>
          )}
          {onToggleMembers && (
            <button
              type="button"
              className="ghost icon"
              aria-pressed={membersOpen}
              aria-label={t('chat.memberList')}
              title={t('chat.memberList')}
              onClick={onToggleMembers}
            >
              <span aria-hidden="true">👥</span>
            </button>
          )}
        </div>
      </header>
      {voice && <VoiceView channel={channel} />}
      {dm && <DmCallPanel channel={channel} />}
      {!voice && (
        <MessageList
          channel={channel}
          focusMessageId={focusMessageId}
          onReply={setReplyTo}
          editing={editing}
          setEditing={setEditing}
        />
      )}
      {!voice && <TypingLine channelId={channel.id} />}
      {voice ? null : has(perms, P.SEND_MESSAGES) ? (
        <Composer
          channel={channel}
          label={t('chat.messageTo', { name: title })}
          replyTo={replyTo}
          clearReply={() => setReplyTo(null)}
          onEditLast={() => {
            const mine = store
              .historyOf(channel.id)
              .items.filter((m) => m.author.id === store.me)
              .at(-1);
            if (mine) setEditing(mine.id);
          }}
          canAttach={has(perms, P.ATTACH_FILES)}
        />
      ) : (
        <p className="composer-disabled">{t('chat.cannotSend')}</p>
      )}
      {pins && <PinsDialog channel={channel} onClose={() => setPins(false)} />}
      {notifications && (
        <NotificationSettings
          id={channel.id}
          name={title}
          guildId={channel.guild_id}
          onClose={() => setNotifications(false)}
        />
      )}
      {groupSettings && <GroupDmSettings channel={channel} onClose={() => setGroupSettings(false)} />}
    </div>
  );
}

/**
 * A conversation's picture beside its name: the other person's in a one-to-one, the group's icon in a group (its
 * name's initials without one).
 */
function DmPicture({ channel, name }: { channel: Channel; name: string }) {
  const store = useChat();
  const source = channel.type === ChannelType.GroupDM ? groupDmIcon(channel) : userAvatar(store.dmPartner(channel));
  return <Avatar source={source} name={name} size={28} />;
}

function TypingLine({ channelId }: { channelId: string }) {
  const { t } = useTranslation();
  const store = useChat();
  const channel = store.channels.get(channelId);
  const names = store.typingIn(channelId).map((id) => store.displayName(id, channel?.guild_id));
  let text = '';
  if (names.length === 1) text = t('chat.typingOne', { name: names[0] });
  else if (names.length === 2) text = t('chat.typingTwo', { a: names[0], b: names[1] });
  else if (names.length > 2) text = t('chat.typingMany');
  return (
    <p className="typing" aria-live="off">
      {text}
    </p>
  );
}
