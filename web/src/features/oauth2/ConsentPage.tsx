import { useEffect, useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { HearthApiError } from '../../api/errors.ts';
import type { PublicApplication, UserGuild } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { hasPermission, permissionNames } from '../../lib/permissions.ts';
import { CHAT_HOME } from '../../shell/router.tsx';

const KNOWN_SCOPES = [
  'identify',
  'email',
  'guilds',
  'connections',
  'bot',
  'applications.commands',
  'openid',
  'profile',
];

/**
 * `/oauth2/authorize?…` (the server's `/v1/oauth2/authorize` redirects here): shows the application and what
 * it asks for in plain words, a community picker for `bot`, then hands the browser to the application's
 * redirect URI with a code (approve) or `error=access_denied` (deny).
 */
export default function ConsentPage() {
  const { t } = useTranslation();
  const { api, user, signOutLocally, navigate } = useApp();
  const params = useMemo(() => new URLSearchParams(window.location.search), []);
  const clientId = params.get('client_id');
  const scopes = (params.get('scope') ?? '').split(/[\s+]+/).filter(Boolean);
  const redirectUri = params.get('redirect_uri');
  const wantsBot = scopes.includes('bot');
  const [application, setApplication] = useState<PublicApplication | null>(null);
  const [guilds, setGuilds] = useState<UserGuild[] | null>(null);
  const [guildId, setGuildId] = useState(params.get('guild_id') ?? '');
  const [busy, setBusy] = useState<'approve' | 'deny' | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const guildSelectId = useId();

  useEffect(() => {
    if (!clientId) return;
    api.oauth2.application(clientId).then(setApplication, setLoadError);
    if (wantsBot) {
      api.users
        .guilds()
        .then(
          (list) =>
            setGuilds(
              list.filter(
                (guild) =>
                  guild.owner ||
                  hasPermission(guild.permissions, 'MANAGE_GUILD') ||
                  hasPermission(guild.permissions, 'ADMINISTRATOR'),
              ),
            ),
          setLoadError,
        );
    }
  }, [api, clientId, wantsBot]);

  const appName = application?.name ?? '';
  if (!clientId || scopes.length === 0) {
    return (
      <PageLayout title={t('oauth.titleUnknown')}>
        <p role="alert" className="notice error">
          {t('oauth.invalidRequest', { detail: clientId ? 'scope' : t('oauth.missingClient') })}
        </p>
      </PageLayout>
    );
  }

  const approve = async () => {
    setBusy('approve');
    setError(null);
    try {
      // Every query member goes to the server as is (PKCE, state, OpenID `nonce`…); unknown ones are ignored.
      const body = Object.fromEntries(params.entries()) as Record<string, string>;
      if (wantsBot && guildId) body.guild_id = guildId;
      const { redirect_to } = await api.oauth2.consent(body as never);
      const target = new URL(redirect_to, window.location.origin);
      if (target.origin === window.location.origin) navigate(target.pathname + target.search, { replace: true });
      else window.location.assign(target.href);
    } catch (caught) {
      // prompt=login / max_age: the sign-in is too old for this application; sign in again and come back here.
      if (caught instanceof HearthApiError && caught.displayCode() === 'LOGIN_REQUIRED') {
        signInAgain();
        return;
      }
      setError(caught);
      setBusy(null);
    }
  };

  const deny = () => {
    setBusy('deny');
    // Only a redirect URI the application registered receives the refusal; anything else stays here.
    if (redirectUri && application?.redirect_uris.includes(redirectUri)) {
      const target = new URL(redirectUri);
      target.searchParams.set('error', 'access_denied');
      const state = params.get('state');
      if (state !== null) target.searchParams.set('state', state);
      window.location.assign(target.href);
    } else {
      navigate(CHAT_HOME, { replace: true });
    }
  };

  const signInAgain = () => {
    signOutLocally();
    navigate(`/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
  };
  const notYou = signInAgain;

  const botPermissions = permissionNames(params.get('permissions'));
  const redirectOrigin = redirectUri && URL.canParse(redirectUri) ? new URL(redirectUri).origin : null;
  const name = user ? (user.global_name ?? user.username) : '';
  return (
    <PageLayout title={application ? t('oauth.title', { app: appName }) : t('oauth.titleUnknown')}>
      <ErrorNotice error={loadError} />
      {user && (
        <p>
          {t('oauth.signedInAs', { name })}{' '}
          <Button variant="link" onClick={notYou}>
            {t('oauth.notYou')}
          </Button>
        </p>
      )}
      {application && (
        <>
          <h2>{t('oauth.permissionsIntro', { app: appName })}</h2>
          <ul className="scopes">
            {scopes.map((scope) => (
              <li key={scope}>
                {KNOWN_SCOPES.includes(scope) ? t(`oauth.scope.${scope}`) : t('oauth.unknownScope', { scope })}
              </li>
            ))}
          </ul>
          {wantsBot && guilds && (
            <>
              {guilds.length === 0 ? (
                <p className="notice info">{t('oauth.noGuilds')}</p>
              ) : (
                <div className="field">
                  <label htmlFor={guildSelectId}>{t('oauth.guildLabel')}</label>
                  <select
                    id={guildSelectId}
                    value={guildId}
                    onChange={(event) => setGuildId(event.target.value)}
                    required
                  >
                    <option value="">{t('oauth.guildChoose')}</option>
                    {guilds.map((guild) => (
                      <option key={guild.id} value={guild.id}>
                        {guild.name}
                      </option>
                    ))}
                  </select>
                </div>
              )}
              <h2>{botPermissions.length > 0 ? t('oauth.botPermissions') : t('oauth.noBotPermissions')}</h2>
              {botPermissions.length > 0 && (
                <ul className="permissions">
                  {botPermissions.map((permission) => (
                    <li key={permission}>{t(`permissions.${permission}`)}</li>
                  ))}
                </ul>
              )}
            </>
          )}
          {redirectOrigin && <p className="hint">{t('oauth.redirectNote', { origin: redirectOrigin })}</p>}
          <ErrorNotice error={error} />
          <div className="actions">
            <Button variant="secondary" busy={busy === 'deny'} disabled={busy !== null} onClick={deny}>
              {t('oauth.deny')}
            </Button>
            <Button
              busy={busy === 'approve'}
              disabled={busy !== null || (wantsBot && (!guildId || !guilds?.length))}
              onClick={() => void approve()}
            >
              {t('oauth.approve')}
            </Button>
          </div>
        </>
      )}
    </PageLayout>
  );
}
