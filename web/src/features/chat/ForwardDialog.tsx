import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Message } from '../../api/chat-types.ts';
import { ChannelType } from '../../api/chat-types.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { useChatStore } from './context.ts';
import { Dialog } from './Dialog.tsx';
import { has, P } from './permissions.ts';

/**
 * "Forward": the server's forward (docs/chat.md, "Forwarding") to another conversation the person may write in: a
 * message carrying a frozen snapshot of this one. The person's optional words follow it as a message of their own
 * (a forward carries nothing but the snapshot).
 */
export function ForwardDialog({
  message,
  channel,
  onClose,
}: {
  message: Message;
  channel: Channel;
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

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const destination = store.channels.get(target);
    if (!destination) return;
    setBusy(true);
    setError(null);
    try {
      await store.api.send(destination.id, {
        message_reference: {
          type: 1,
          message_id: message.id,
          channel_id: channel.id,
          ...(channel.guild_id ? { guild_id: channel.guild_id } : {}),
        },
      });
      if (comment.trim()) await store.send(destination.id, comment.trim());
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
        <blockquote className="quote-preview">
          {(message.message_snapshots?.[0]?.message.content ?? message.content).slice(0, 300)}
        </blockquote>
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
