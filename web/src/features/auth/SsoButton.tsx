import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { requestedPath } from '../../shell/App.tsx';

/** Starts single sign-on: the server gives the provider's URL; the callback page finishes (SsoCallbackPage). */
export function SsoButton({ provider }: { provider: string }) {
  const { t } = useTranslation();
  const { api } = useApp();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      const { authorization_url } = await api.auth.ssoStart(requestedPath() ?? undefined);
      window.location.assign(authorization_url);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  return (
    <>
      <Button variant="secondary" busy={busy} onClick={() => void start()}>
        {t('signIn.withSso', { provider })}
      </Button>
      <ErrorNotice error={error} />
    </>
  );
}
