import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Relationship } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { channelPath, useChat } from './context.ts';
import { NotificationPrompt, titleCount } from './notifications.tsx';

type Tab = 'all' | 'pending' | 'blocked' | 'add';

/** /channels/@me: friends, pending requests (accept, ignore), blocked people, add by username. */
export function FriendsView({ onOpenNav }: { onOpenNav: () => void }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [tab, setTab] = useState<Tab>('all');
  const [username, setUsername] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState<string | null>(null);
  const mentions = titleCount(store);
  useEffect(() => {
    document.title = `${mentions ? `(${mentions}) ` : ''}${t('chat.friends')} · ${t('app.name')}`;
  }, [t, mentions]);

  const all = [...store.relationships.values()];
  const shown: Relationship[] =
    tab === 'all'
      ? all.filter((r) => r.type === 1)
      : tab === 'pending'
        ? all.filter((r) => r.type === 3 || r.type === 4)
        : tab === 'blocked'
          ? all.filter((r) => r.type === 2)
          : [];
  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError(caught);
    }
  };
  const add = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setSent(null);
    await run(async () => {
      await store.api.addFriend(username.trim());
      setSent(username.trim());
      setUsername('');
    });
    setBusy(false);
  };
  const tabs: [Tab, string][] = [
    ['all', t('chat.friendsAll')],
    ['pending', t('chat.friendsPending')],
    ['blocked', t('chat.friendsBlocked')],
    ['add', t('chat.addFriend')],
  ];
  return (
    <div className="friends">
      <header className="channel-header">
        <button type="button" className="ghost nav-toggle" onClick={onOpenNav} aria-label={t('chat.openNavigation')}>
          ☰
        </button>
        <h1>{t('chat.friends')}</h1>
        <div className="tabs">
          {tabs.map(([id, label]) => (
            <button key={id} type="button" className="ghost small" aria-pressed={tab === id} onClick={() => setTab(id)}>
              {label}
            </button>
          ))}
        </div>
      </header>
      <div className="friends-body">
        <NotificationPrompt />
        <ErrorNotice error={error} />
        {tab === 'add' ? (
          <form onSubmit={add} className="add-friend">
            <Field
              label={t('chat.addByUsername')}
              value={username}
              onChange={(e) => setUsername(e.target.value)}
              required
              autoComplete="off"
            />
            <Button type="submit" busy={busy} disabled={!username.trim()}>
              {t('chat.sendRequest')}
            </Button>
            {sent && <Notice>{t('chat.requestSentTo', { name: sent })}</Notice>}
          </form>
        ) : shown.length === 0 ? (
          <p>{t(`chat.empty.${tab}`)}</p>
        ) : (
          <ul className="friend-list">
            {shown.map((r) => {
              const name = r.user.global_name ?? r.user.username;
              return (
                <li key={r.id}>
                  <Avatar source={store.avatarOf(r.id)} name={name} size={32} />
                  <span className="friend-name">
                    {name} <span className="user-handle">@{r.user.username}</span>
                  </span>
                  <span className="hint">
                    {r.type === 3 ? t('chat.incoming') : r.type === 4 ? t('chat.outgoing') : ''}
                  </span>
                  <span className="friend-actions">
                    {r.type === 1 && (
                      <button
                        type="button"
                        className="secondary small"
                        onClick={() =>
                          run(async () => {
                            const dm = await store.api.openDm(r.id);
                            navigate(channelPath(dm));
                          })
                        }
                      >
                        {t('chat.messageName', { name })}
                      </button>
                    )}
                    {r.type === 3 && (
                      <button
                        type="button"
                        className="primary small"
                        onClick={() => run(() => store.api.setRelationship(r.id, 1))}
                      >
                        {t('chat.acceptName', { name })}
                      </button>
                    )}
                    {r.type !== 2 && (
                      <button
                        type="button"
                        className="secondary small"
                        onClick={() => run(() => store.api.setRelationship(r.id, 2))}
                      >
                        {t('chat.blockName', { name })}
                      </button>
                    )}
                    <button
                      type="button"
                      className="ghost small"
                      onClick={() => run(() => store.api.removeRelationship(r.id))}
                    >
                      {r.type === 2
                        ? t('chat.unblockName', { name })
                        : r.type === 1
                          ? t('chat.removeName', { name })
                          : t('chat.ignoreName', { name })}
                    </button>
                  </span>
                </li>
              );
            })}
          </ul>
        )}
      </div>
    </div>
  );
}
