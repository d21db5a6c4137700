import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { CaptchaAnswer } from '../../api/api.ts';
import { HearthApiError } from '../../api/errors.ts';
import { isMfaChallenge, type MfaChallenge, type TokenResponse } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { Captcha } from '../../components/Captcha.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { fieldSentence } from '../../components/error-sentence.ts';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { rememberPassword } from '../../lib/password-known.ts';
import { getAssertion, webauthnSupported } from '../../lib/webauthn.ts';
import { nextPath } from '../../shell/App.tsx';
import { IpAuthorizationWait, type IpTicket } from './IpAuthorizationWait.tsx';
import { MfaStep } from './MfaStep.tsx';
import { passkeyError } from './passkey-error.ts';
import { SsoButton } from './SsoButton.tsx';

type Step = { kind: 'credentials' } | { kind: 'mfa'; challenge: MfaChallenge } | { kind: 'ip'; ticket: IpTicket };

/** Sign in: email and password, then whatever the server asks next (MFA, new-location approval). */
export default function SignInPage() {
  const { t } = useTranslation();
  const { api, discovery, signIn, navigate } = useApp();
  const [step, setStep] = useState<Step>({ kind: 'credentials' });
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [captcha, setCaptcha] = useState<CaptchaAnswer | undefined>();
  const [busy, setBusy] = useState<'password' | 'passkey' | null>(null);
  const [error, setError] = useState<unknown>(null);

  const finish = async (response: TokenResponse) => {
    // Read before signing in: the shell's guard may already move this tab to the same place.
    const target = nextPath();
    await signIn(response);
    navigate(target, { replace: true });
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy('password');
    setError(null);
    try {
      const result = await api.auth.login(email, password, captcha);
      if (isMfaChallenge(result)) setStep({ kind: 'mfa', challenge: result });
      else {
        rememberPassword(result.user_id);
        await finish(result);
      }
    } catch (caught) {
      if (caught instanceof HearthApiError && caught.code === 'IP_AUTHORIZATION_REQUIRED') {
        const body = caught.body as { ticket: string; email: string; resend_available_in?: number };
        setStep({
          kind: 'ip',
          ticket: { ticket: body.ticket, email: body.email, resendIn: body.resend_available_in ?? 30 },
        });
      } else {
        setError(caught);
      }
    } finally {
      setBusy(null);
    }
  };

  const passkey = async () => {
    setBusy('passkey');
    setError(null);
    try {
      const { response, challenge } = await getAssertion(await api.auth.passkeyOptions());
      await finish(await api.auth.passkey(response, challenge));
    } catch (caught) {
      setError(passkeyError(caught));
    } finally {
      setBusy(null);
    }
  };

  if (step.kind === 'mfa') {
    // Reached from the password form only: the account has one.
    const done = (response: TokenResponse) => {
      rememberPassword(response.user_id);
      return finish(response);
    };
    return <MfaStep challenge={step.challenge} onDone={done} onCancel={() => setStep({ kind: 'credentials' })} />;
  }
  if (step.kind === 'ip') {
    return (
      <IpAuthorizationWait ticket={step.ticket} onDone={finish} onRestart={() => setStep({ kind: 'credentials' })} />
    );
  }

  const sso = discovery.sso;
  const provider = sso.display_name ?? 'SSO';
  if (sso.enabled && sso.enforced) {
    return (
      <PageLayout title={t('signIn.title')}>
        <p>{t('signIn.ssoOnly', { provider })}</p>
        <SsoButton provider={provider} />
      </PageLayout>
    );
  }

  const codes = error instanceof HearthApiError ? error.fieldCodes() : {};
  // A wrong email or password is one sentence about the pair, not a mark on the email field.
  const emailError = codes.email === 'INVALID_EMAIL_OR_PASSWORD' ? undefined : fieldSentence(t, codes, 'email');
  const formError = emailError ? null : error;
  return (
    <PageLayout title={t('signIn.title')}>
      <p>{t('signIn.welcome')}</p>
      <form onSubmit={submit} noValidate>
        <Field
          label={t('common.email')}
          type="email"
          name="email"
          autoComplete="username webauthn"
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
          error={emailError}
        />
        <Field
          label={t('common.password')}
          type="password"
          name="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
        <Captcha config={discovery.captcha} onAnswer={setCaptcha} />
        <ErrorNotice error={formError} />
        <Button type="submit" busy={busy === 'password'} disabled={busy !== null}>
          {t('signIn.submit')}
        </Button>
      </form>
      <p>
        <Link href="/forgot">{t('signIn.forgot')}</Link>
      </p>
      <div className="alternatives">
        {webauthnSupported() && (
          <Button variant="secondary" busy={busy === 'passkey'} disabled={busy !== null} onClick={() => void passkey()}>
            {t('signIn.withPasskey')}
          </Button>
        )}
        {sso.enabled && <SsoButton provider={provider} />}
      </div>
      {discovery.registration.mode !== 'closed' && (
        <p>
          {t('signIn.noAccount')} <Link href="/register">{t('common.register')}</Link>
        </p>
      )}
    </PageLayout>
  );
}
