import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { useChat } from './context.ts';
import { Dialog } from './Dialog.tsx';
import {
  chosenLevel,
  guildLevel,
  isMuted,
  NOTIFY_LEVELS,
  type NotifyLevel,
  setLevel,
  setMuted,
  setSuppress,
  suppresses,
} from './notifications.tsx';

/**
 * A guild's, a channel's or a direct conversation's notification settings: mute (no unread badge, no notification,
 * no count in the tab's title) and what notifies; for a guild, whether @everyone / @here and role pings count. A
 * channel may follow its guild's level; a conversation notifies every message unless told otherwise. Each change
 * applies at once and is kept on the server (a conversation's in the account's `guild_id: null` entry); the dialog
 * has no save step to forget.
 */
export function NotificationSettings({
  id,
  name,
  guildId,
  onClose,
}: {
  /** The guild's or the channel's id. */
  id: string;
  /** As shown: "Workshop", "#general", or a conversation's name. */
  name: string;
  /** For a guild channel: the guild whose level it may follow. Absent for a guild itself and for a DM. */
  guildId?: string | undefined;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const store = useChat();
  const followHint = useId();
  const [error, setError] = useState<unknown>(null);
  // From the store: a change made in another tab shows here too (USER_GUILD_SETTINGS_UPDATE).
  const muted = isMuted(store, id);
  const level = chosenLevel(store, id);
  const isGuild = store.guilds.has(id);
  const dm = !isGuild && !guildId;
  const shown: NotifyLevel | 'follow' = level ?? (isGuild ? guildLevel(store, id) : dm ? 'all' : 'follow');
  const suppressHint = useId();
  const suppress = (what: 'everyone' | 'roles', on: boolean) => {
    setError(null);
    void setSuppress(store, id, what, on).catch(setError);
  };
  const choose = (next: NotifyLevel | undefined) => {
    setError(null);
    void setLevel(store, id, next).catch(setError);
  };
  const labels: Record<NotifyLevel, string> = {
    all: t('chat.notifyAll'),
    mentions: t('chat.notifyMentions'),
    nothing: t('chat.notifyNothing'),
  };
  return (
    <Dialog title={t('chat.notificationsFor', { name })} onClose={onClose}>
      <label className="check">
        <input
          type="checkbox"
          checked={muted}
          onChange={(event) => {
            setError(null);
            void setMuted(store, id, event.target.checked).catch(setError);
          }}
        />{' '}
        {t('chat.muteNamed', { name })}
      </label>
      <p className="hint">{t('chat.muteHint')}</p>
      {isGuild && (
        <>
          <label className="check">
            <input
              type="checkbox"
              checked={suppresses(store, id, 'everyone')}
              aria-describedby={suppressHint}
              onChange={(event) => suppress('everyone', event.target.checked)}
            />{' '}
            {t('chat.suppressEveryone')}
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={suppresses(store, id, 'roles')}
              aria-describedby={suppressHint}
              onChange={(event) => suppress('roles', event.target.checked)}
            />{' '}
            {t('chat.suppressRoles')}
          </label>
          <p id={suppressHint} className="hint">
            {t('chat.suppressHint')}
          </p>
        </>
      )}
      <fieldset className="notify-levels">
        <legend>{t('chat.notifyAbout')}</legend>
        {guildId && (
          <label className="check">
            <input
              type="radio"
              name={`notify-${id}`}
              checked={shown === 'follow'}
              aria-describedby={followHint}
              onChange={() => choose(undefined)}
            />{' '}
            {t('chat.notifyFollow')}
          </label>
        )}
        {/* Outside the label: the radio's name stays apart from the level of the same words below it. */}
        {guildId && (
          <p id={followHint} className="hint">
            {t('chat.notifyFollowNow', { level: labels[guildLevel(store, guildId)] })}
          </p>
        )}
        {NOTIFY_LEVELS.map((option) => (
          <label key={option} className="check">
            <input type="radio" name={`notify-${id}`} checked={shown === option} onChange={() => choose(option)} />{' '}
            {labels[option]}
          </label>
        ))}
      </fieldset>
      <ErrorNotice error={error} />
      <div className="dialog-actions">
        <button type="button" className="primary" onClick={onClose}>
          {t('chat.done')}
        </button>
      </div>
    </Dialog>
  );
}
