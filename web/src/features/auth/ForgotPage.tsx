import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { CaptchaAnswer } from '../../api/api.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { Captcha } from '../../components/Captcha.tsx';
import { EmailDeliveryNotice } from '../../components/EmailDeliveryNotice.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';

/** Asks for a reset link. The server answers 204 whether or not the address exists, and so does this page. */
export default function ForgotPage() {
  const { t } = useTranslation();
  const { api, discovery } = useApp();
  const [email, setEmail] = useState('');
  const [captcha, setCaptcha] = useState<CaptchaAnswer | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [sentTo, setSentTo] = useState<string | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api.auth.forgot(email, captcha);
      setSentTo(email);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  if (sentTo) {
    return (
      <PageLayout title={t('forgot.sentTitle')}>
        <Notice tone="success">{t('forgot.sent', { email: sentTo })}</Notice>
        <EmailDeliveryNotice sent={0} />
        <p>
          <Link href="/login">{t('common.signIn')}</Link>
        </p>
      </PageLayout>
    );
  }
  return (
    <PageLayout title={t('forgot.title')}>
      <p>{t('forgot.intro')}</p>
      <form onSubmit={submit} noValidate>
        <Field
          label={t('common.email')}
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
        />
        <Captcha config={discovery.captcha} onAnswer={setCaptcha} />
        <ErrorNotice error={error} />
        <Button type="submit" busy={busy}>
          {t('forgot.submit')}
        </Button>
      </form>
      <p>
        <Link href="/login">{t('common.back')}</Link>
      </p>
    </PageLayout>
  );
}
