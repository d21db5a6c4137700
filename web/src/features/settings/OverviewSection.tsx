import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { EmailDeliveryNotice } from '../../components/EmailDeliveryNotice.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { formatDate, snowflakeDate } from '../../i18n/format.ts';

/**
 * The account at a glance, first in the settings: username, email and whether it is verified (with the
 * verification email sent again while it is not; the chat's banner links here), member since, whether a second
 * factor is on, and signing out.
 */
export function OverviewSection() {
  const { t } = useTranslation();
  const { api, user, signOutLocally } = useApp();
  const [busy, setBusy] = useState<'resend' | 'out' | null>(null);
  const [resentAt, setResentAt] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (!user) return null;

  const resendVerification = async () => {
    setBusy('resend');
    setError(null);
    try {
      await api.auth.resendVerification();
      setResentAt(Date.now());
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(null);
    }
  };

  const signOut = async () => {
    setBusy('out');
    try {
      await api.auth.logout();
    } catch {
      // Signed out locally either way: a revoked or unreachable session must not keep the person in.
    }
    signOutLocally();
  };

  return (
    <section aria-labelledby="account-heading">
      <h2 id="account-heading" tabIndex={-1}>
        {t('settings.accountTitle')}
      </h2>
      <dl className="facts">
        <dt>{t('common.username')}</dt>
        <dd>{user.username}</dd>
        {user.email && (
          <>
            <dt>{t('common.email')}</dt>
            <dd>
              {user.email}
              {user.verified && ` · ${t('settings.emailVerified')}`}
            </dd>
          </>
        )}
      </dl>
      <p>{t('settings.memberSince', { date: formatDate(snowflakeDate(user.id)) })}</p>
      <p>{user.mfa_enabled ? t('settings.mfaOn') : t('settings.mfaOff')}</p>
      {user.email && !user.verified && (
        <p>
          {t('settings.emailNotVerified')}{' '}
          <Button variant="link" busy={busy === 'resend'} onClick={() => void resendVerification()}>
            {t('settings.resendVerification')}
          </Button>
        </p>
      )}
      {resentAt !== null && <Notice tone="success">{t('verify.resent')}</Notice>}
      <EmailDeliveryNotice sent={resentAt} />
      <ErrorNotice error={error} />
      <div className="actions">
        <Button variant="danger" busy={busy === 'out'} onClick={() => void signOut()}>
          {t('common.signOut')}
        </Button>
      </div>
    </section>
  );
}
