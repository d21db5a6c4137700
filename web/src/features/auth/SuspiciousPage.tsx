import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';

/**
 * Shown instead of a signed-in page while the account carries suspicious-activity flags (403
 * `ACCOUNT_SUSPICIOUS_ACTIVITY` on every ordinary route): says what to do and offers what is still allowed.
 */
export function SuspiciousPage() {
  const { t } = useTranslation();
  const { api, signOutLocally } = useApp();
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const resend = async () => {
    setError(null);
    try {
      await api.auth.resendVerification();
      setSent(true);
    } catch (caught) {
      setError(caught);
    }
  };
  const signOut = async () => {
    await api.auth.logout().catch(() => undefined);
    signOutLocally();
  };
  return (
    <PageLayout title={t('suspicious.title')}>
      <p>{t('suspicious.body')}</p>
      {sent && <Notice tone="success">{t('verify.resent')}</Notice>}
      <ErrorNotice error={error} />
      <div className="actions">
        {!sent && (
          <Button variant="secondary" onClick={() => void resend()}>
            {t('verify.resend')}
          </Button>
        )}
        <Button variant="danger" onClick={() => void signOut()}>
          {t('common.signOut')}
        </Button>
      </div>
    </PageLayout>
  );
}
