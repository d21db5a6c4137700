import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { HearthApiError } from '../../api/errors.ts';
import { isMfaChallenge, type MfaChallenge, type TokenResponse } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Notice } from '../../components/ErrorNotice.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { takeFragmentParam } from '../../lib/fragment.ts';
import { rememberPassword } from '../../lib/password-known.ts';
import { CHAT_HOME } from '../../shell/router.tsx';
import { MfaStep } from './MfaStep.tsx';
import { NewPasswordForm } from './NewPasswordForm.tsx';

type State = 'checking' | 'invalid' | 'form' | 'done';

/** `/reset#token=…` from the reset email: check the link, choose a password, then MFA if the account has it. */
export default function ResetPage() {
  const { t } = useTranslation();
  const { api, signIn } = useApp();
  const [token] = useState(() => takeFragmentParam('token'));
  const [state, setState] = useState<State>(token ? 'checking' : 'invalid');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [mfa, setMfa] = useState<MfaChallenge | null>(null);

  useEffect(() => {
    if (!token) return;
    api.auth.resetValid(token).then(
      ({ valid }) => setState(valid ? 'form' : 'invalid'),
      () => setState('invalid'),
    );
  }, [api, token]);

  const finish = async (response: TokenResponse) => {
    rememberPassword(response.user_id);
    await signIn(response);
    setMfa(null);
    setState('done');
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!token) return;
    setBusy(true);
    setError(null);
    try {
      const result = await api.auth.reset(token, password);
      if (isMfaChallenge(result)) setMfa(result);
      else await finish(result);
    } catch (caught) {
      if (caught instanceof HearthApiError && caught.displayCode() === 'INVALID_OR_EXPIRED_RESET_TOKEN')
        setState('invalid');
      else setError(caught);
    } finally {
      setBusy(false);
    }
  };

  if (mfa) return <MfaStep challenge={mfa} onDone={finish} onCancel={() => setMfa(null)} />;

  return (
    <PageLayout title={t('reset.title')}>
      {state === 'checking' && (
        <p role="status" className="waiting">
          <span className="spinner" aria-hidden="true" /> {t('reset.checking')}
        </p>
      )}
      {state === 'invalid' && (
        <>
          <p role="alert" className="notice error">
            {token ? t('reset.invalid') : t('reset.missing')}
          </p>
          <p>
            <Link href="/forgot">{t('reset.askAgain')}</Link>
          </p>
        </>
      )}
      {state === 'form' && (
        <NewPasswordForm
          password={password}
          onPasswordChange={setPassword}
          onSubmit={submit}
          busy={busy}
          error={error}
          submitLabel={t('reset.submit')}
        />
      )}
      {state === 'done' && (
        <>
          <Notice tone="success">{t('reset.done')}</Notice>
          <p>
            <Link href={CHAT_HOME}>{t('app.backHome')}</Link>
          </p>
        </>
      )}
    </PageLayout>
  );
}
