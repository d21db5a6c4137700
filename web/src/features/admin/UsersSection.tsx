import { type FormEvent, useCallback, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { AdminSession, AdminUser } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { formatDate } from '../../i18n/format.ts';
import { userAvatar } from '../../lib/media.ts';
import { lines, useAction } from './use-action.ts';

const DISABLED = 1n << 38n;

/** Users: search (id, email, username, name#0001), then one account's facts and the actions on it. */
export function UsersSection() {
  const { t } = useTranslation();
  const { api } = useApp();
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<AdminUser[] | null>(null);
  const [selected, setSelected] = useState<AdminUser | null>(null);
  const search = useAction();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSelected(null);
    void search.run(async () => {
      setResults((await api.admin.lookup(query.trim())).users);
    });
  };

  return (
    <>
      <form onSubmit={submit}>
        <Field
          label={t('admin.search')}
          hint={t('admin.searchHint')}
          value={query}
          required
          maxLength={254}
          onChange={(event) => setQuery(event.target.value)}
        />
        <ErrorNotice error={search.error} />
        <Button type="submit" busy={search.busy}>
          {t('admin.searchButton')}
        </Button>
      </form>
      {results && (
        <section aria-labelledby="results-heading">
          <h2 id="results-heading">{t('admin.results')}</h2>
          {results.length === 0 ? (
            <p>{t('admin.noResults')}</p>
          ) : (
            <ul>
              {results.map((found) => (
                <li key={found.id} className="with-picture">
                  <Avatar source={userAvatar(found)} name={found.username} size={32} />
                  <Button variant="link" onClick={() => setSelected(found)}>
                    {t('admin.open', { name: `${found.username} (${found.email ?? found.id})` })}
                  </Button>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
      {selected && (
        <UserDetails
          key={selected.id}
          user={selected}
          onChanged={(next) => {
            setSelected(next);
            setResults((list) => list?.map((item) => (item.id === next.id ? next : item)) ?? null);
          }}
        />
      )}
    </>
  );
}

function UserDetails({ user, onChanged }: { user: AdminUser; onChanged: (user: AdminUser) => void }) {
  const { t } = useTranslation();
  const { api } = useApp();
  const aclsId = useId();
  const [acls, setAcls] = useState(user.acls.join('\n'));
  const [days, setDays] = useState('60');
  const [reason, setReason] = useState('0');
  const [sessions, setSessions] = useState<AdminSession[] | null>(null);
  const account = useAction();
  const rights = useAction();
  const deletion = useAction();
  const disabled = (BigInt(user.flags) & DISABLED) !== 0n;

  const reload = useCallback(async () => {
    const [found] = (await api.admin.lookup(user.id)).users.filter((item) => item.id === user.id);
    if (found) onChanged(found);
    setSessions((await api.admin.listSessions(user.id)).sessions);
  }, [api, user.id, onChanged]);

  useEffect(() => {
    api.admin.listSessions(user.id).then(
      (answer) => setSessions(answer.sessions),
      () => setSessions(null),
    );
  }, [api, user.id]);

  const toggleDisabled = () =>
    account.run(async () => {
      const change = disabled ? { remove_flags: DISABLED.toString() } : { add_flags: DISABLED.toString() };
      onChanged((await api.admin.updateFlags(user.id, change)).user);
      setSessions((await api.admin.listSessions(user.id)).sessions);
      return disabled ? t('admin.enabled') : t('admin.disabled');
    });

  const resetMfa = () =>
    account.run(async () => {
      await api.admin.disableMfa(user.id);
      await reload();
      return t('admin.mfaReset');
    });

  const signOutAll = () =>
    account.run(async () => {
      await api.admin.terminateSessions(user.id);
      await reload();
      return t('admin.signedOutAll');
    });

  const saveAcls = (event: FormEvent) => {
    event.preventDefault();
    void rights.run(async () => {
      await api.admin.setAcls(user.id, lines(acls));
      await reload();
      return t('admin.aclsSaved');
    });
  };

  const schedule = (event: FormEvent) => {
    event.preventDefault();
    void deletion.run(async () => {
      await api.admin.scheduleDeletion(user.id, Number(reason), Number(days));
      await reload();
      return t('admin.deletionScheduled');
    });
  };

  const cancelDeletion = () =>
    deletion.run(async () => {
      await api.admin.cancelDeletion(user.id);
      await reload();
      return t('admin.deletionCancelled');
    });

  const mfaOn = user.authenticator_types.length > 0;
  return (
    <section aria-labelledby="user-heading">
      <h2 id="user-heading" className="with-picture">
        <Avatar source={userAvatar(user)} name={user.username} size={48} />
        {t('admin.userTitle', { name: user.username })}
      </h2>
      <dl className="facts">
        <dt>{t('admin.userId')}</dt>
        <dd>
          <code>{user.id}</code>
        </dd>
        <dt>{t('admin.email')}</dt>
        <dd>
          {user.email ?? '—'}{' '}
          {user.email && `(${user.email_verified ? t('admin.emailVerified') : t('admin.emailUnverified')})`}
        </dd>
        <dt>{t('admin.status')}</dt>
        <dd>
          {disabled ? t('admin.statusDisabled') : t('admin.statusActive')}
          {user.pending_deletion_at && (
            <>
              {' · '}
              {t('admin.pendingDeletion', { date: formatDate(user.pending_deletion_at, 'dateTime') })}
            </>
          )}
          {user.temp_banned_until && (
            <>
              {' · '}
              {t('admin.tempBanned', { date: formatDate(user.temp_banned_until, 'dateTime') })}
            </>
          )}
        </dd>
        <dt>{t('admin.mfa')}</dt>
        <dd>{mfaOn ? t('admin.mfaOn') : t('admin.mfaOff')}</dd>
        <dt>{t('admin.lastActive')}</dt>
        <dd>{user.last_active_at ? formatDate(user.last_active_at, 'dateTime') : t('admin.never')}</dd>
      </dl>
      <ErrorNotice error={account.error} />
      {account.done && <Notice tone="success">{account.done}</Notice>}
      <div className="actions">
        <Button variant={disabled ? 'secondary' : 'danger'} busy={account.busy} onClick={() => void toggleDisabled()}>
          {disabled ? t('admin.enable') : t('admin.disable')}
        </Button>
        <Button variant="secondary" disabled={account.busy || !mfaOn} onClick={() => void resetMfa()}>
          {t('admin.resetMfa')}
        </Button>
        <Button variant="secondary" disabled={account.busy} onClick={() => void signOutAll()}>
          {t('admin.signOutAll')}
        </Button>
      </div>

      <h3>{t('admin.sessionsTitle')}</h3>
      {sessions && sessions.length === 0 && <p>{t('admin.noSessions')}</p>}
      {sessions && sessions.length > 0 && (
        <ul>
          {sessions.map((session) => (
            <li key={session.id_hash}>
              {t('admin.sessionLine', {
                client:
                  [session.client_info?.platform, session.client_info?.os].filter(Boolean).join(', ') ||
                  t('admin.unknownClient'),
                ip: session.ip ?? t('admin.unknownIp'),
                date: formatDate(session.last_used_at, 'dateTime'),
              })}
            </li>
          ))}
        </ul>
      )}

      <h3>{t('admin.aclsTitle')}</h3>
      <form onSubmit={saveAcls}>
        <div className="field">
          <label htmlFor={aclsId}>{t('admin.acls')}</label>
          <textarea
            id={aclsId}
            rows={4}
            value={acls}
            spellCheck={false}
            aria-describedby={`${aclsId}-hint`}
            onChange={(event) => setAcls(event.target.value)}
          />
          <p id={`${aclsId}-hint`} className="hint">
            {t('admin.aclsHint')}
          </p>
        </div>
        <ErrorNotice error={rights.error} />
        {rights.done && <Notice tone="success">{rights.done}</Notice>}
        <Button type="submit" busy={rights.busy}>
          {t('admin.saveAcls')}
        </Button>
      </form>

      <h3>{t('admin.deletionTitle')}</h3>
      <ErrorNotice error={deletion.error} />
      {deletion.done && <Notice tone="success">{deletion.done}</Notice>}
      {user.pending_deletion_at ? (
        <Button variant="secondary" busy={deletion.busy} onClick={() => void cancelDeletion()}>
          {t('admin.cancelDeletion')}
        </Button>
      ) : (
        <form onSubmit={schedule}>
          <Field
            label={t('admin.deletionDays')}
            type="number"
            min={0}
            max={365}
            required
            value={days}
            onChange={(event) => setDays(event.target.value)}
          />
          <Field
            label={t('admin.deletionReason')}
            hint={t('admin.deletionReasonHint')}
            type="number"
            min={0}
            max={1000}
            required
            value={reason}
            onChange={(event) => setReason(event.target.value)}
          />
          <Button type="submit" variant="danger" busy={deletion.busy}>
            {t('admin.scheduleDeletion')}
          </Button>
        </form>
      )}
    </section>
  );
}
