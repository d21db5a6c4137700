import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SessionInfo } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { SudoCancelled, useSudo } from '../../components/SudoPrompt.tsx';
import { formatDate } from '../../i18n/format.ts';
import { useLoaded } from '../../lib/use-loaded.ts';

/** Where the account is signed in: device and place of each session, sign one out, or every other one. */
export function SessionsSection() {
  const { t } = useTranslation();
  const { api, signOutLocally } = useApp();
  const withSudo = useSudo();
  const [busy, setBusy] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const [sessions, , load] = useLoaded(() => api.auth.sessions(), api, setError);

  const device = (session: SessionInfo) => {
    const { os, platform } = session.client_info ?? {};
    if (platform && os) return t('settings.deviceOn', { platform, os });
    return platform || os || t('settings.unknownDevice');
  };
  const place = (session: SessionInfo) =>
    [session.client_info?.location, session.masked_ip].filter(Boolean).join(' · ') || t('settings.unknownPlace');

  const signOut = async (hashes: string[], key: string, done: string) => {
    setBusy(key);
    setError(null);
    setMessage(null);
    try {
      await withSudo((proof) => api.auth.logoutSessions(hashes, proof), { always: true });
      setMessage(done);
      await load();
    } catch (caught) {
      if (!(caught instanceof SudoCancelled)) setError(caught);
    } finally {
      setBusy(null);
    }
  };

  const signOutHere = async () => {
    setBusy('here');
    try {
      await api.auth.logout();
    } catch {
      // Signed out locally either way.
    }
    signOutLocally();
  };

  const others = (sessions ?? []).filter((session) => !session.current);
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">{t('settings.sessionsTitle')}</h2>
      {sessions && (
        <>
          <p>{t('settings.sessions', { count: sessions.length })}</p>
          <ul className="session-list" aria-labelledby="sessions-heading">
            {sessions.map((session) => {
              const name = device(session);
              return (
                <li key={session.id_hash}>
                  <div>
                    <strong>{name}</strong>
                    {session.current && <span className="badge"> · {t('settings.thisDevice')}</span>}
                  </div>
                  <div className="hint">
                    {t('settings.sessionPlace', { place: place(session) })}
                    {session.approx_last_used_at &&
                      ` · ${t('settings.lastUsed', { date: formatDate(session.approx_last_used_at, 'dateTime') })}`}
                  </div>
                  {session.current ? (
                    <Button variant="secondary" busy={busy === 'here'} onClick={() => void signOutHere()}>
                      {t('settings.signOutHere')}
                    </Button>
                  ) : (
                    <Button
                      variant="secondary"
                      busy={busy === session.id_hash}
                      aria-label={t('settings.signOutSession', { device: name })}
                      onClick={() => void signOut([session.id_hash], session.id_hash, t('settings.sessionSignedOut'))}
                    >
                      {t('common.signOut')}
                    </Button>
                  )}
                </li>
              );
            })}
          </ul>
        </>
      )}
      {message && <Notice tone="success">{message}</Notice>}
      <ErrorNotice error={error} />
      {others.length > 0 && (
        <Button
          variant="danger"
          busy={busy === 'others'}
          onClick={() =>
            void signOut(
              others.map((session) => session.id_hash),
              'others',
              t('settings.othersSignedOut'),
            )
          }
        >
          {t('settings.signOutOthers')}
        </Button>
      )}
    </section>
  );
}
