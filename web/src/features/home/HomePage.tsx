import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SessionInfo } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { EmailDeliveryNotice } from '../../components/EmailDeliveryNotice.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { SudoCancelled, useSudo } from '../../components/SudoPrompt.tsx';
import { formatDate, snowflakeDate } from '../../i18n/format.ts';
import { PasskeySection } from './PasskeySection.tsx';

/** The signed-in landing page (part 2 replaces it with chat): who you are, where you are signed in, sign out. */
export default function HomePage() {
  const { t } = useTranslation();
  const { api, user, signOutLocally } = useApp();
  const withSudo = useSudo();
  const [sessions, setSessions] = useState<SessionInfo[] | null>(null);
  const [busy, setBusy] = useState<'out' | 'everywhere' | 'resend' | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [resentAt, setResentAt] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);

  const loadSessions = useCallback(async () => {
    try {
      setSessions(await api.auth.sessions());
    } catch (caught) {
      setError(caught);
    }
  }, [api]);

  useEffect(() => {
    void loadSessions();
  }, [loadSessions]);

  if (!user) return null;
  const name = user.global_name ?? user.username;

  const signOut = async () => {
    setBusy('out');
    try {
      await api.auth.logout();
    } catch {
      // Signed out locally either way: a revoked or unreachable session must not keep the person in.
    }
    signOutLocally();
  };

  const signOutEverywhere = async () => {
    setBusy('everywhere');
    setError(null);
    setMessage(null);
    try {
      const others = (sessions ?? []).filter((session) => !session.current).map((session) => session.id_hash);
      await withSudo((proof) => api.auth.logoutSessions(others, proof));
      setMessage(t('home.signedOutEverywhere'));
      await loadSessions();
    } catch (caught) {
      if (!(caught instanceof SudoCancelled)) setError(caught);
    } finally {
      setBusy(null);
    }
  };

  const resendVerification = async () => {
    setBusy('resend');
    setError(null);
    try {
      await api.auth.resendVerification();
      setMessage(t('verify.resent'));
      setResentAt(Date.now());
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(null);
    }
  };

  return (
    <PageLayout title={t('home.title', { name })}>
      <p>
        {t('home.intro')} <Link href="/channels/@me">{t('home.openChat')}</Link> ·{' '}
        <Link href="/settings">{t('settings.title')}</Link> · <Link href="/developers">{t('developers.title')}</Link>
        {(user.acls?.includes('admin:authenticate') || user.acls?.includes('*')) && (
          <>
            {' · '}
            <Link href="/admin">{t('admin.title')}</Link>
          </>
        )}
      </p>
      <section aria-labelledby="account-heading">
        <h2 id="account-heading">{t('home.account')}</h2>
        <dl className="facts">
          <dt>{t('common.username')}</dt>
          <dd>{user.username}</dd>
          {user.email && (
            <>
              <dt>{t('common.email')}</dt>
              <dd>
                {user.email} {user.verified ? `· ${t('home.emailVerified')}` : ''}
              </dd>
            </>
          )}
        </dl>
        <p>{t('home.memberSince', { date: formatDate(snowflakeDate(user.id)) })}</p>
        <p>{user.mfa_enabled ? t('home.mfaOn') : t('home.mfaOff')}</p>
        {user.email && !user.verified && (
          <p>
            {t('home.emailNotVerified')}{' '}
            <Button variant="link" busy={busy === 'resend'} onClick={() => void resendVerification()}>
              {t('home.resendVerification')}
            </Button>
          </p>
        )}
      </section>
      <PasskeySection />
      <section aria-labelledby="sessions-heading">
        <h2 id="sessions-heading">{t('home.sessionsTitle')}</h2>
        {sessions && (
          <>
            <p>{t('home.sessions', { count: sessions.length })}</p>
            <ul className="sessions">
              {sessions.map((session) => (
                <li key={session.id_hash}>
                  {[session.client_info?.os, session.client_info?.location, session.masked_ip]
                    .filter(Boolean)
                    .join(' · ') || '—'}
                  {session.current && <strong> · {t('home.thisDevice')}</strong>}
                  {session.approx_last_used_at && (
                    <span className="hint">
                      {' '}
                      · {t('home.lastUsed', { date: formatDate(session.approx_last_used_at, 'dateTime') })}
                    </span>
                  )}
                </li>
              ))}
            </ul>
          </>
        )}
        {message && <Notice tone="success">{message}</Notice>}
        <EmailDeliveryNotice sent={resentAt} />
        <ErrorNotice error={error} />
        <div className="actions">
          <Button variant="secondary" busy={busy === 'everywhere'} onClick={() => void signOutEverywhere()}>
            {t('home.signOutEverywhere')}
          </Button>
          <Button variant="danger" busy={busy === 'out'} onClick={() => void signOut()}>
            {t('common.signOut')}
          </Button>
        </div>
      </section>
    </PageLayout>
  );
}
