import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, UserProfile } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { AppsMenu, USER_COMMAND } from './AppsMenu.tsx';
import { channelPath, useChat } from './context.ts';

/**
 * A small card about someone: names, roles in this guild, the servers and friends in common, a private note,
 * message and friend actions. It takes the focus when it opens, so a keyboard is in it at once, and gives it back
 * to what opened it when it closes.
 */
export function UserPopout({
  userId,
  guildId,
  channel,
  onClose,
}: {
  userId: string;
  guildId?: string | undefined;
  /** The channel the card was opened from: its user commands ("Apps") act there. */
  channel?: Channel | undefined;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [error, setError] = useState<unknown>(null);
  const user = store.users.get(userId) ?? (guildId ? store.guilds.get(guildId)?.members.get(userId)?.user : undefined);
  const guild = guildId ? store.guilds.get(guildId) : undefined;
  const member = guild?.members.get(userId);
  const relationship = store.relationships.get(userId);
  const card = useRef<HTMLElement>(null);
  const [profile, setProfile] = useState<UserProfile | null>(null);
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    card.current?.focus();
    return () => {
      const active = document.activeElement;
      if (opener?.isConnected && (!active || active === document.body || !!card.current?.contains(active)))
        opener.focus();
    };
  }, []);
  useEffect(() => {
    let live = true;
    store.api.profile(userId).then(
      (loaded) => live && setProfile(loaded),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [store, userId]);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  if (!user) return null;
  const run = async (action: () => Promise<unknown>) => {
    try {
      await action();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <section
      ref={card}
      tabIndex={-1}
      className="popout"
      aria-label={t('chat.profileOf', { name: store.displayName(userId, guildId) })}
    >
      <Avatar
        source={store.avatarOf(userId, guildId)}
        name={store.displayName(userId, guildId)}
        size={64}
        className="popout-avatar"
      />
      <p className="popout-name">{user.global_name ?? user.username}</p>
      <p className="user-handle">
        @{user.username}
        {profile?.user_profile.pronouns && ` · ${profile.user_profile.pronouns}`}
      </p>
      {profile?.user_profile.bio && (
        <>
          <p className="popout-heading">{t('chat.aboutMe')}</p>
          <p className="popout-bio">{profile.user_profile.bio}</p>
        </>
      )}
      {member && member.roles.length > 0 && (
        <ul className="role-list" aria-label={t('chat.roles')}>
          {member.roles.map((id) => {
            const role = guild?.roles.get(id);
            return role ? <li key={id}>{role.name}</li> : null;
          })}
        </ul>
      )}
      {profile && userId !== store.me && (
        <>
          {/* As in the clients people know, "0 mutual friends" is not said: the heading comes with a list. */}
          {profile.mutual_guilds.length > 0 && (
            <p className="popout-heading" id={`mutual-guilds-${userId}`}>
              {t('chat.mutualServers', { count: profile.mutual_guilds.length })}
            </p>
          )}
          {profile.mutual_guilds.length > 0 && (
            <ul className="mutual-list" aria-labelledby={`mutual-guilds-${userId}`}>
              {profile.mutual_guilds.map((g) => (
                <li key={g.id}>{store.guilds.get(g.id)?.guild.name ?? g.id}</li>
              ))}
            </ul>
          )}
          {profile.mutual_friends.length > 0 && (
            <p className="popout-heading" id={`mutual-friends-${userId}`}>
              {t('chat.mutualFriends', { count: profile.mutual_friends.length })}
            </p>
          )}
          {profile.mutual_friends.length > 0 && (
            <ul className="mutual-list" aria-labelledby={`mutual-friends-${userId}`}>
              {profile.mutual_friends.map((friend) => (
                <li key={friend.id}>{friend.global_name ?? friend.username}</li>
              ))}
            </ul>
          )}
        </>
      )}
      {userId !== store.me && (
        <div className="field">
          <label htmlFor={`note-${userId}`}>{t('chat.note')}</label>
          <textarea
            id={`note-${userId}`}
            rows={2}
            maxLength={256}
            placeholder={t('chat.notePlaceholder')}
            defaultValue={store.notes.get(userId) ?? ''}
            onBlur={(event) => {
              const note = event.target.value.trim();
              if (note !== (store.notes.get(userId) ?? '')) void run(() => store.api.setNote(userId, note));
            }}
          />
        </div>
      )}
      {userId !== store.me && (
        <div className="popout-actions">
          <button
            type="button"
            className="secondary small"
            onClick={() =>
              run(async () => {
                const dm = await store.api.openDm(userId);
                onClose();
                navigate(channelPath(dm));
              })
            }
          >
            {t('chat.sendMessage')}
          </button>
          {!relationship && !user.bot && (
            <button
              type="button"
              className="secondary small"
              onClick={() => run(() => store.api.setRelationship(userId, 1))}
            >
              {t('chat.addFriend')}
            </button>
          )}
          {relationship?.type === 4 && <span className="hint">{t('chat.requestSent')}</span>}
        </div>
      )}
      {channel && (
        <div className="popout-actions">
          <AppsMenu
            channel={channel}
            type={USER_COMMAND}
            targetId={userId}
            className="secondary small"
            onError={setError}
          />
        </div>
      )}
      <ErrorNotice error={error} />
      <button type="button" className="ghost small" onClick={onClose}>
        {t('chat.close')}
      </button>
    </section>
  );
}
