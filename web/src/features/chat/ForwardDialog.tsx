import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Message } from '../../api/chat-types.ts';
import { ChannelType } from '../../api/chat-types.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { channelPath, useChatStore } from './context.ts';
import { Dialog } from './Dialog.tsx';
import { has, P } from './permissions.ts';

/** The server's bound on a message's content (the API's `content` ≤ 2000). */
const CONTENT_MAX = 2000;

/**
 * "Forward": a copy of a message sent to another conversation the person may write in. The server has no forward
 * of its own, so the copy is an ordinary message: the person's optional words, then the original quoted under
 * its author and channel, its files by link, and a link back to the original (which opens it where it was).
 */
export function ForwardDialog({
  message,
  channel,
  author,
  onClose,
}: {
  message: Message;
  channel: Channel;
  author: string;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const store = useChatStore();
  const selectId = useId();
  const commentId = useId();
  const [target, setTarget] = useState('');
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sentTo, setSentTo] = useState<string | null>(null);

  const writable = (c: Channel) => c.id !== channel.id && has(store.permissions(c), P.SEND_MESSAGES);
  const groups = store
    .orderedGuilds()
    .map((g) => ({
      label: g.guild.name,
      channels: store.guildChannels(g.guild.id).filter((c) => c.type === ChannelType.Text && writable(c)),
    }))
    .filter((g) => g.channels.length > 0);
  const direct = store.privateChannels().filter(writable);
  const optionLabel = (c: Channel) => (c.guild_id ? `#${store.channelLabel(c)}` : store.channelLabel(c));
  const where = channel.guild_id ? `#${store.channelLabel(channel)}` : store.channelLabel(channel);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const destination = store.channels.get(target);
    if (!destination) return;
    const link = `${window.location.origin}${channelPath(channel)}/${message.id}`;
    const quoted = [
      t('chat.forwardedFrom', { name: author, channel: where }),
      ...message.content.split('\n'),
      ...message.attachments.map((a) => a.url),
    ]
      .filter((line, index) => index === 0 || line.trim() !== '')
      .map((line) => `> ${line}`)
      .join('\n');
    const tail = `\n${link}`;
    const head = comment.trim() ? `${comment.trim()}\n` : '';
    const room = CONTENT_MAX - head.length - tail.length;
    const body = quoted.length > room ? `${quoted.slice(0, Math.max(0, room - 1))}…` : quoted;
    setBusy(true);
    setError(null);
    try {
      await store.send(destination.id, `${head}${body}${tail}`);
      setSentTo(optionLabel(destination));
      setComment('');
    } catch (caught) {
      setError(caught);
    }
    setBusy(false);
  };

  return (
    <Dialog title={t('chat.forwardTitle')} onClose={onClose}>
      <form onSubmit={submit}>
        <blockquote className="quote-preview">{message.content.slice(0, 300)}</blockquote>
        <div className="field">
          <label htmlFor={selectId}>{t('chat.forwardTo')}</label>
          <select id={selectId} value={target} required onChange={(e) => setTarget(e.target.value)}>
            <option value="">{t('chat.forwardPick')}</option>
            {groups.map((g) => (
              <optgroup key={g.label} label={g.label}>
                {g.channels.map((c) => (
                  <option key={c.id} value={c.id}>
                    {optionLabel(c)}
                  </option>
                ))}
              </optgroup>
            ))}
            {direct.length > 0 && (
              <optgroup label={t('chat.directMessages')}>
                {direct.map((c) => (
                  <option key={c.id} value={c.id}>
                    {optionLabel(c)}
                  </option>
                ))}
              </optgroup>
            )}
          </select>
        </div>
        <div className="field">
          <label htmlFor={commentId}>{t('chat.forwardComment')}</label>
          <textarea
            id={commentId}
            rows={2}
            maxLength={500}
            value={comment}
            onChange={(e) => setComment(e.target.value)}
          />
        </div>
        <ErrorNotice error={error} />
        {sentTo && <Notice>{t('chat.forwardedTo', { name: sentTo })}</Notice>}
        <div className="dialog-actions">
          <Button type="submit" busy={busy} disabled={!target}>
            {t('chat.forwardSend')}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
