import { Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { HearthApi } from '../api/api.ts';
import { HearthApiError } from '../api/errors.ts';
import { SessionStore } from '../api/session-store.ts';
import type { DiscoveryDocument, PrivateUser, TokenResponse } from '../api/types.ts';
import { AppContext, type AppContextValue } from '../app-context.tsx';
import { SudoProvider } from '../components/SudoPrompt.tsx';
import { SuspiciousPage } from '../features/auth/SuspiciousPage.tsx';
import { GatewayClient } from '../gateway/client.ts';
import { GatewayHub } from '../gateway/hub.ts';
import { pickLocale, setLocale } from '../i18n/index.ts';
import { NotFoundPage } from './NotFoundPage.tsx';
import { CHAT_HOME, navigate, useLocation } from './router.tsx';
import { findRoute } from './routes.ts';
import { UnavailablePage } from './UnavailablePage.tsx';

const sessions = new SessionStore();

/** Where the person was headed (`?next=` on /login, a same-origin path), if anywhere. */
export function requestedPath(): string | null {
  const next = new URLSearchParams(window.location.search).get('next');
  return next?.startsWith('/') && !next.startsWith('//') ? next : null;
}

/** After signing in, go where the person was headed, else to the chat. */
export function nextPath(): string {
  return requestedPath() ?? CHAT_HOME;
}

/** The app shell: holds the session and account, guards routes, and renders the current page. */
export function App({ discovery }: { discovery: DiscoveryDocument }) {
  const { t } = useTranslation();
  const location = useLocation();
  const api = useMemo(
    () =>
      new HearthApi(
        `${discovery.endpoints.api_client}/v1`,
        () => sessions.get()?.token ?? null,
        // Any 401 to a request made with the session token means it was revoked: sign this tab out, unless
        // the tab has a new token meanwhile (a password change revokes the old one and hands out another).
        (rejected) => signOutIfStill(rejected, () => sessions.clear()),
      ),
    [discovery],
  );
  const [user, setUser] = useState<PrivateUser | null>(null);
  const [loadingUser, setLoadingUser] = useState(() => sessions.get() !== null);
  // Signed in, but the account must act first (verify its email…): /users/@me answers 403 until it does.
  const [suspicious, setSuspicious] = useState(false);
  // The account could not be loaded for another reason (server unreachable, 5xx): the session may be fine.
  const [loadError, setLoadError] = useState<unknown>(null);

  const loadUser = useCallback(async () => {
    if (!sessions.get()) {
      setUser(null);
      setSuspicious(false);
      setLoadError(null);
      setLoadingUser(false);
      return;
    }
    // Only the first load shows "Loading…"; a reload after sign-in keeps the current page mounted (a page
    // that just spent a one-time link must not start over).
    try {
      const me = await api.users.me();
      setUser(me);
      setSuspicious(false);
      setLoadError(null);
      await setLocale(pickLocale(me.locale));
    } catch (error) {
      if (error instanceof HearthApiError && error.status === 401) sessions.clear();
      const flagged = error instanceof HearthApiError && error.code === 'ACCOUNT_SUSPICIOUS_ACTIVITY';
      setSuspicious(flagged);
      const signedOut = error instanceof HearthApiError && error.status === 401;
      setLoadError(flagged || signedOut ? null : error);
      setUser(null);
    } finally {
      setLoadingUser(false);
    }
  }, [api]);

  useEffect(() => {
    void loadUser();
    return sessions.subscribe(() => void loadUser());
  }, [loadUser]);

  const signOutLocally = useCallback(() => {
    api.http.forgetSudoProof();
    sessions.clear();
  }, [api]);

  // One gateway connection while signed in: it ends the session here when the server revokes it.
  // Features (chat) listen through the hub, which outlives reconnects.
  const token = user ? sessions.get()?.token : undefined;
  const hub = useMemo(() => new GatewayHub(), []);
  useEffect(() => {
    if (!token) return;
    hub.reset();
    const gateway = new GatewayClient({
      url: discovery.endpoints.gateway,
      token,
      onInvalidSession: () => signOutIfStill(token, signOutLocally),
      onConnectionChange: (connected) => hub.setConnected(connected),
      onDispatch: (type, data) => {
        if (type === 'USER_UPDATE')
          setUser((current) => (current ? { ...current, ...(data as PrivateUser) } : current));
        hub.emit(type, data);
      },
    });
    gateway.start();
    hub.probe = () => gateway.probe();
    hub.send = (op, d) => gateway.sendOp(op, d);
    return () => gateway.stop();
  }, [token, discovery, signOutLocally, hub]);

  const value: AppContextValue = useMemo(
    () => ({
      discovery,
      api,
      sessions,
      user,
      gateway: hub,
      navigate,
      signOutLocally,
      refreshUser: loadUser,
      async signIn(response: TokenResponse) {
        sessions.set({ token: response.token, userId: response.user_id });
        await loadUser();
      },
    }),
    [discovery, api, user, loadUser, signOutLocally, hub],
  );

  const current = findRoute(location.pathname);
  let redirect: string | undefined;
  if (current && !loadingUser) {
    if (current.access === 'signed-in' && !user && !suspicious && !loadError) {
      const here = location.pathname + location.search;
      redirect = here === '/' ? '/login' : `/login?next=${encodeURIComponent(here)}`;
    } else if (current.access === 'signed-out' && user) {
      redirect = nextPath();
    } else if (location.pathname === '/' && user) {
      // Signed in, `/` opens the chat (issue 18), replacing `/` in the history so Back does not bounce.
      redirect = CHAT_HOME;
    }
  }
  useEffect(() => {
    if (redirect) navigate(redirect, { replace: true });
  }, [redirect]);

  const loading = (
    <p className="loading" role="status">
      {t('app.loading')}
    </p>
  );
  let content = loading;
  if (!current) content = <NotFoundPage />;
  else if (!loadingUser && suspicious && current.access === 'signed-in') content = <SuspiciousPage />;
  else if (!loadingUser && loadError && current.access === 'signed-in')
    content = <UnavailablePage error={loadError} retry={() => void loadUser()} />;
  else if (!loadingUser && !redirect) content = <current.page />;

  return (
    <AppContext.Provider value={value}>
      <SudoProvider>
        <Suspense fallback={loading}>{content}</Suspense>
      </SudoProvider>
    </AppContext.Provider>
  );
}

/** How long a revocation waits for a replacement token (the answer of the request that revoked it) to arrive. */
const REPLACEMENT_GRACE_MS = 1500;

/** Signs out when `token` is still the tab's token once the grace period is over. */
function signOutIfStill(token: string, signOut: () => void): void {
  window.setTimeout(() => {
    if (sessions.get()?.token === token) signOut();
  }, REPLACEMENT_GRACE_MS);
}
