import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { MfaChallenge, TokenResponse } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { getAssertion, webauthnSupported } from '../../lib/webauthn.ts';
import { passkeyError } from './passkey-error.ts';

type Method = 'totp' | 'backup' | 'webauthn';

/** The second step of sign-in: TOTP, a backup code (same route), or a passkey, as the ticket allows. */
export function MfaStep({
  challenge,
  onDone,
  onCancel,
}: {
  challenge: MfaChallenge;
  onDone: (response: TokenResponse) => Promise<void>;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const { api } = useApp();
  const methods: Method[] = [
    ...(challenge.totp ? (['totp', 'backup'] as const) : []),
    ...(challenge.webauthn && webauthnSupported() ? (['webauthn'] as const) : []),
  ];
  const [method, setMethod] = useState<Method>(methods[0] ?? 'totp');
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const run = async (action: () => Promise<TokenResponse>) => {
    setBusy(true);
    setError(null);
    try {
      await onDone(await action());
    } catch (caught) {
      setError(passkeyError(caught));
    } finally {
      setBusy(false);
    }
  };

  const submitCode = (event: FormEvent) => {
    event.preventDefault();
    void run(() => api.auth.mfaTotp(challenge.ticket, code.trim()));
  };

  const confirmWithPasskey = () =>
    run(async () => {
      const { response, challenge: webauthnChallenge } = await getAssertion(
        await api.auth.mfaWebauthnOptions(challenge.ticket),
      );
      return api.auth.mfaWebauthn(challenge.ticket, response, webauthnChallenge);
    });

  const choose = (next: Method) => {
    setMethod(next);
    setCode('');
    setError(null);
  };

  const labels: Record<Method, string> = {
    totp: t('signIn.useTotp'),
    backup: t('signIn.useBackup'),
    webauthn: t('signIn.usePasskey'),
  };

  return (
    <PageLayout title={t('signIn.mfaTitle')}>
      <p>{t('signIn.mfaIntro')}</p>
      {method === 'webauthn' ? (
        <div>
          <p>{t('signIn.passkeyPrompt')}</p>
          <ErrorNotice error={error} />
          <Button busy={busy} onClick={() => void confirmWithPasskey()}>
            {t('signIn.passkeyButton')}
          </Button>
        </div>
      ) : (
        <form onSubmit={submitCode} noValidate>
          <Field
            key={method}
            label={method === 'totp' ? t('signIn.totpLabel') : t('signIn.backupLabel')}
            hint={method === 'totp' ? t('signIn.totpHint') : t('signIn.backupHint')}
            inputMode={method === 'totp' ? 'numeric' : 'text'}
            autoComplete="one-time-code"
            autoFocus
            required
            value={code}
            onChange={(event) => setCode(event.target.value)}
          />
          <ErrorNotice error={error} />
          <Button type="submit" busy={busy}>
            {t('signIn.verify')}
          </Button>
        </form>
      )}
      {methods.length > 1 && (
        <ul className="method-list">
          {methods
            .filter((other) => other !== method)
            .map((other) => (
              <li key={other}>
                <Button variant="link" onClick={() => choose(other)}>
                  {labels[other]}
                </Button>
              </li>
            ))}
        </ul>
      )}
      <Button variant="link" onClick={onCancel}>
        {t('common.back')}
      </Button>
    </PageLayout>
  );
}
