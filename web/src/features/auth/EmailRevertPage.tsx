import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Notice } from '../../components/ErrorNotice.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { takeFragmentParam } from '../../lib/fragment.ts';
import { rememberPassword } from '../../lib/password-known.ts';
import { CHAT_HOME } from '../../shell/router.tsx';
import { NewPasswordForm } from './NewPasswordForm.tsx';

/**
 * `/auth/email-revert#token=…` from the "your email was changed" message: restores the old address, sets a
 * new password and drops every factor and session (the account may be in someone else's hands).
 */
export default function EmailRevertPage() {
  const { t } = useTranslation();
  const { api, signIn } = useApp();
  const [token] = useState(() => takeFragmentParam('token'));
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!token) return;
    setBusy(true);
    setError(null);
    try {
      const response = await api.auth.emailRevert(token, password);
      rememberPassword(response.user_id);
      await signIn(response);
      setDone(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <PageLayout title={t('revert.title')}>
      {!token && (
        <p role="alert" className="notice error">
          {t('reset.missing')}
        </p>
      )}
      {token && !done && (
        <>
          <p>{t('revert.intro')}</p>
          <NewPasswordForm
            password={password}
            onPasswordChange={setPassword}
            onSubmit={submit}
            busy={busy}
            error={error}
            submitLabel={t('revert.submit')}
          />
        </>
      )}
      {done && (
        <>
          <Notice tone="success">{t('revert.done')}</Notice>
          <p>
            <Link href={CHAT_HOME}>{t('app.backHome')}</Link>
          </p>
        </>
      )}
    </PageLayout>
  );
}
