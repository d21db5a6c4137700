import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { CHAT_HOME } from '../../shell/router.tsx';

/** `/auth/sso/callback?code=…&state=…`: the identity provider sends the browser here; we finish and go on. */
export default function SsoCallbackPage() {
  const { t } = useTranslation();
  const { api, signIn, navigate } = useApp();
  const [error, setError] = useState<unknown>(null);
  const [providerError, setProviderError] = useState<string | null>(null);
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const params = new URLSearchParams(window.location.search);
    // The code and state are single-use: drop them from the address bar and history at once.
    window.history.replaceState(null, '', window.location.pathname);
    const code = params.get('code');
    const state = params.get('state');
    if (!code || !state) {
      setProviderError(params.get('error_description') ?? params.get('error') ?? 'missing code');
      return;
    }
    api.auth.ssoComplete(code, state).then(
      async (result) => {
        await signIn(result);
        const next = result.redirect_to;
        navigate(next?.startsWith('/') && !next.startsWith('//') ? next : CHAT_HOME, { replace: true });
      },
      (caught: unknown) => setError(caught),
    );
  }, [api, signIn, navigate]);

  const failed = error !== null || providerError !== null;
  return (
    <PageLayout title={t('sso.title')}>
      {!failed && (
        <p role="status" className="waiting">
          <span className="spinner" aria-hidden="true" /> {t('sso.working')}
        </p>
      )}
      {failed && (
        <>
          <p role="alert" className="notice error">
            {t('sso.failed')}
          </p>
          {providerError && <p>{t('sso.providerError', { error: providerError })}</p>}
          <ErrorNotice error={error} />
          <p>
            <Link href="/login">{t('common.signIn')}</Link>
          </p>
        </>
      )}
    </PageLayout>
  );
}
