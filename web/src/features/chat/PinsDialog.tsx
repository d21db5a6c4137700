import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Message } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { channelPath, jumpToMessage, useChat } from './context.ts';
import { Dialog } from './Dialog.tsx';
import { markdownContext } from './MessageItem.tsx';
import { MessageTime } from './MessageTime.tsx';
import { Markdown } from './markdown.tsx';

export function PinsDialog({ channel, onClose }: { channel: Channel; onClose: () => void }) {
  const { t } = useTranslation();
  const store = useChat();
  const { navigate } = useApp();
  const [pins, setPins] = useState<Message[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    store.api.pins(channel.id).then(setPins, setError);
  }, [store, channel.id]);
  return (
    <Dialog title={t('chat.pinnedMessages')} onClose={onClose}>
      <ErrorNotice error={error} />
      {pins && pins.length === 0 && <p>{t('chat.noPins')}</p>}
      <ul className="pins">
        {pins?.map((m) => (
          <li key={m.id}>
            <Avatar
              source={store.avatarOf(m.author.id, channel.guild_id, { user: m.author })}
              name={store.displayName(m.author.id, channel.guild_id)}
              size={20}
            />{' '}
            <strong>{store.displayName(m.author.id, channel.guild_id)}</strong> <MessageTime timestamp={m.timestamp} />
            {/* Rendered as in the channel (bold, code, mentions by name), not its markdown. */}
            <div className="pin-content">
              <Markdown
                source={m.content}
                ctx={{ ...markdownContext(store, channel.guild_id), spoiler: t('chat.spoiler') }}
              />
            </div>
            <button
              type="button"
              className="link"
              onClick={() => {
                // The message link: the list loads the window around the message when it does not hold it.
                onClose();
                const target = `${channelPath(channel)}/${m.id}`;
                if (window.location.pathname === target) jumpToMessage(m.id);
                else navigate(target);
              }}
            >
              {t('chat.jumpToMessage')}
            </button>
          </li>
        ))}
      </ul>
    </Dialog>
  );
}
