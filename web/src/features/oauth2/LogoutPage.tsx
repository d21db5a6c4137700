import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { CHAT_HOME } from '../../shell/router.tsx';

const PARAMS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state'] as const;

/**
 * RP-initiated logout (docs/oauth2.md#rp-initiated-logout): the end-session endpoint checked the request and sent
 * the browser here. A signed-in user is asked; the confirmation route checks the parameters again, ends this
 * session and names where to go (a registered post-logout URI, or nowhere). A signed-out browser goes on at once.
 */
export default function LogoutPage() {
  const { t } = useTranslation();
  const { api, sessions, user, signOutLocally, navigate } = useApp();
  const request = useMemo(() => {
    const query = new URLSearchParams(window.location.search);
    const body: Record<string, string> = {};
    for (const name of PARAMS) {
      const value = query.get(name);
      if (value !== null) body[name] = value;
    }
    return body;
  }, []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const signedIn = sessions.get() !== null;

  const signOut = async () => {
    setBusy(true);
    setError(null);
    try {
      const { redirect_to } = await api.oauth2.logout(request);
      signOutLocally();
      if (redirect_to) window.location.assign(redirect_to);
      else navigate('/login', { replace: true });
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  // Nothing to ask a browser that has no session: it only needs sending back.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once, on arrival
  useEffect(() => {
    if (!signedIn) void signOut();
  }, []);

  const name = user ? (user.global_name ?? user.username) : '';
  return (
    <PageLayout title={t('oauth.logoutTitle')}>
      <ErrorNotice error={error} />
      {signedIn && (
        <>
          {user && <p>{t('oauth.signedInAs', { name })}</p>}
          <p>{t('oauth.logoutBody')}</p>
          <div className="actions">
            <Button variant="secondary" disabled={busy} onClick={() => navigate(CHAT_HOME, { replace: true })}>
              {t('oauth.logoutStay')}
            </Button>
            <Button busy={busy} disabled={busy} onClick={() => void signOut()}>
              {t('oauth.logoutConfirm')}
            </Button>
          </div>
        </>
      )}
    </PageLayout>
  );
}
