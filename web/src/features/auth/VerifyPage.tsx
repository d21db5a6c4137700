import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { EmailDeliveryNotice } from '../../components/EmailDeliveryNotice.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Link } from '../../components/Link.tsx';
import { CHAT_HOME } from '../../shell/router.tsx';
import { LinkResultPage } from './LinkResultPage.tsx';

/** `/verify#token=…` from the verification email. */
export default function VerifyPage() {
  const { t } = useTranslation();
  const { api, user } = useApp();
  const [resent, setResent] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback((token: string) => api.auth.verify(token), [api]);
  const resend = async () => {
    setError(null);
    try {
      await api.auth.resendVerification();
      setResent(true);
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <LinkResultPage
      title={t('verify.title')}
      working={t('verify.working')}
      done={t('verify.done')}
      failed={t('verify.failed')}
      run={run}
      after={(state) => (
        <>
          {state === 'failed' &&
            (user ? (
              <>
                {resent && <Notice tone="success">{t('verify.resent')}</Notice>}
                <EmailDeliveryNotice sent={resent ? 1 : null} />
                <ErrorNotice error={error} />
                {!resent && (
                  <Button variant="secondary" onClick={() => void resend()}>
                    {t('verify.resend')}
                  </Button>
                )}
              </>
            ) : (
              <p>{t('verify.signInToResend')}</p>
            ))}
          {state !== 'working' && (
            <p>
              <Link href={user ? CHAT_HOME : '/login'}>{user ? t('app.backHome') : t('common.signIn')}</Link>
            </p>
          )}
        </>
      )}
    />
  );
}
