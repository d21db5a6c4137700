import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { CaptchaAnswer } from '../../api/api.ts';
import { HearthApiError } from '../../api/errors.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { Captcha } from '../../components/Captcha.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { fieldSentence } from '../../components/error-sentence.ts';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { rememberPassword } from '../../lib/password-known.ts';
import { nextPath } from '../../shell/App.tsx';

/** Registration: CAPTCHA when the instance configures one; approval mode explained before and after. */
export default function RegisterPage() {
  const { t } = useTranslation();
  const { api, discovery, signIn, navigate } = useApp();
  const [email, setEmail] = useState('');
  const [username, setUsername] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [password, setPassword] = useState('');
  const [consent, setConsent] = useState(false);
  const [captcha, setCaptcha] = useState<CaptchaAnswer | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [pending, setPending] = useState(false);
  const mode = discovery.registration.mode;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const result = await api.auth.register(
        { email, username, password, consent, ...(displayName ? { global_name: displayName } : {}) },
        captcha,
      );
      if ('registration_pending_approval' in result) {
        setPending(true);
        return;
      }
      // Back to where the person was going (an invite, for one), else home; read before signing in moves on.
      const next = nextPath();
      if (password) rememberPassword(result.user_id);
      await signIn(result);
      navigate(next, { replace: true });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  if (pending) {
    return (
      <PageLayout title={t('register.pendingTitle')}>
        <Notice tone="success">{t('register.pendingBody')}</Notice>
        <p>
          <Link href="/login">{t('common.signIn')}</Link>
        </p>
      </PageLayout>
    );
  }

  if (mode === 'closed') {
    return (
      <PageLayout title={t('register.title')}>
        <p role="alert">{t('register.closed')}</p>
        <p>
          <Link href="/login">{t('common.signIn')}</Link>
        </p>
      </PageLayout>
    );
  }

  const codes = error instanceof HearthApiError ? error.fieldCodes() : {};
  const fieldErrors = {
    email: fieldSentence(t, codes, 'email'),
    username: fieldSentence(t, codes, 'username'),
    global_name: fieldSentence(t, codes, 'global_name'),
    password: fieldSentence(t, codes, 'password'),
  };
  const anyFieldError = Object.values(fieldErrors).some(Boolean);
  return (
    <PageLayout title={t('register.title')}>
      {mode === 'approval' && <Notice>{t('register.approvalNote')}</Notice>}
      <form onSubmit={submit} noValidate>
        <Field
          label={t('common.email')}
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
          error={fieldErrors.email}
        />
        <Field
          label={t('common.username')}
          hint={t('register.usernameHint')}
          autoComplete="username"
          required
          pattern="[A-Za-z0-9_]{1,32}"
          maxLength={32}
          value={username}
          onChange={(event) => setUsername(event.target.value)}
          error={fieldErrors.username}
        />
        <Field
          label={`${t('common.displayName')} ${t('common.optional')}`}
          autoComplete="nickname"
          maxLength={32}
          value={displayName}
          onChange={(event) => setDisplayName(event.target.value)}
          error={fieldErrors.global_name}
        />
        <Field
          label={t('common.password')}
          hint={t('register.passwordHint')}
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          value={password}
          onChange={(event) => setPassword(event.target.value)}
          error={fieldErrors.password}
        />
        <div className="field checkbox">
          <input
            id="register-consent"
            type="checkbox"
            checked={consent}
            onChange={(e) => setConsent(e.target.checked)}
          />
          <label htmlFor="register-consent">{t('register.consent')}</label>
        </div>
        <Captcha config={discovery.captcha} onAnswer={setCaptcha} />
        <ErrorNotice error={anyFieldError ? new HearthApiError(400, 'INVALID_FORM_BODY', '', {}) : error} />
        <Button type="submit" busy={busy}>
          {t('register.submit')}
        </Button>
      </form>
      <p>
        {t('register.haveAccount')} <Link href="/login">{t('common.signIn')}</Link>
      </p>
    </PageLayout>
  );
}
