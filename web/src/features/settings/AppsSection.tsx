import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { AuthorizedApp } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { formatDate } from '../../i18n/format.ts';
import { useLoaded } from '../../lib/use-loaded.ts';

/** The scopes the consent page knows how to say in words (`oauth.scope.*`). */
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

/** Applications this account authorised through OAuth2: what each may do, and revoking it. */
export function AppsSection() {
  const { t } = useTranslation();
  const { api } = useApp();
  const [busy, setBusy] = useState<string | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  const [apps, , load] = useLoaded(() => api.oauth2.authorizations(), api, setError);

  const revoke = async (app: AuthorizedApp) => {
    setBusy(app.application.id);
    setError(null);
    setRevoked(null);
    try {
      await api.oauth2.revokeAuthorization(app.application.id);
      setRevoked(app.application.name);
      await load();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(null);
    }
  };

  return (
    <section aria-labelledby="apps-heading">
      <h2 id="apps-heading">{t('settings.appsTitle')}</h2>
      {apps && apps.length === 0 && <p>{t('settings.appsNone')}</p>}
      {apps && apps.length > 0 && (
        <ul className="authorised-apps" aria-labelledby="apps-heading">
          {apps.map((app) => (
            <li key={app.application.id}>
              <strong>{app.application.name}</strong>
              <span className="hint"> · {t('settings.appAuthorisedOn', { date: formatDate(app.authorized_at) })}</span>
              <ul className="scopes">
                {app.scopes.map((scope) => (
                  <li key={scope}>
                    {KNOWN_SCOPES.includes(scope) ? t(`oauth.scope.${scope}`) : t('oauth.unknownScope', { scope })}
                  </li>
                ))}
              </ul>
              <Button
                variant="secondary"
                busy={busy === app.application.id}
                aria-label={t('settings.appRevokeNamed', { app: app.application.name })}
                onClick={() => void revoke(app)}
              >
                {t('settings.appRevoke')}
              </Button>
            </li>
          ))}
        </ul>
      )}
      {revoked && <Notice tone="success">{t('settings.appRevoked', { app: revoked })}</Notice>}
      <ErrorNotice error={error} />
    </section>
  );
}
