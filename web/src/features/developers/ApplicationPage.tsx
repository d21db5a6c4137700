import { type ChangeEvent, type FormEvent, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { HearthApiError } from '../../api/errors.ts';
import type { Application } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { SecretReveal } from '../../components/SecretReveal.tsx';
import { SudoCancelled, useSudo } from '../../components/SudoPrompt.tsx';
import { imageUrl, userAvatar } from '../../lib/media.ts';
import { useLocation } from '../../shell/router.tsx';
import { forget, peek } from './handoff.ts';
import { InviteBuilder } from './InviteBuilder.tsx';

const PREFIX = '/developers/applications/';

/** Runs an action and keeps its error for an `<ErrorNotice>` (a closed sudo prompt is no error). */
function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      if (!(caught instanceof SudoCancelled)) setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

/**
 * `/developers/applications/{id}`: the application's name, redirect URIs, client secret reset, bot token
 * reset, bot profile, the invite-link builder and deletion. Secrets show once, with a copy button.
 */
export default function ApplicationPage() {
  const { t } = useTranslation();
  const { api } = useApp();
  const { pathname } = useLocation();
  const id = pathname.startsWith(PREFIX) ? pathname.slice(PREFIX.length) : '';
  const [app, setApp] = useState<Application | null>(null);
  const [scopes, setScopes] = useState<string[]>([]);
  const [loadError, setLoadError] = useState<unknown>(null);
  // Secrets minted for this application in this tab (creation, resets), shown while the page stays open.
  const [minted, setSecrets] = useState(() => ({ id, ...peek(id) }));
  const secrets = minted.id === id ? minted : { id };

  useEffect(() => {
    forget(id);
    setApp(null);
    setLoadError(null);
    api.applications.get(id).then(setApp, setLoadError);
    api.oauth2.application(id).then(
      (found) => setScopes(found.scopes ?? []),
      () => setScopes([]),
    );
  }, [api, id]);

  if (!app) {
    return (
      <PageLayout title={t('developers.title')} narrow={false}>
        <p>
          <Link href="/developers">{t('developers.backToPortal')}</Link>
        </p>
        <ErrorNotice error={loadError} />
        {!loadError && <p>{t('developers.loading')}</p>}
      </PageLayout>
    );
  }

  return (
    <PageLayout title={app.name} narrow={false}>
      <p>
        <Link href="/developers">{t('developers.backToPortal')}</Link>
      </p>
      <GeneralSection app={app} onSaved={setApp} />
      <OAuthSection
        app={app}
        clientSecret={secrets.clientSecret}
        onChanged={(next, clientSecret) => {
          setApp(next);
          if (clientSecret) setSecrets({ ...secrets, clientSecret });
        }}
      />
      <BotSection
        app={app}
        botToken={secrets.botToken}
        onChanged={(next, botToken) => {
          setApp(next);
          if (botToken) setSecrets({ ...secrets, botToken });
        }}
      />
      {app.bot && <InviteBuilder applicationId={app.id} supportedScopes={scopes} />}
      <DeleteSection app={app} />
    </PageLayout>
  );
}

function GeneralSection({ app, onSaved }: { app: Application; onSaved: (app: Application) => void }) {
  const { t } = useTranslation();
  const { api } = useApp();
  const [name, setName] = useState(app.name);
  const [saved, setSaved] = useState(false);
  const { busy, error, run } = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    void run(async () => {
      onSaved(await api.applications.update(app.id, { name: name.trim() }));
      setSaved(true);
    });
  };
  return (
    <section aria-labelledby="general-heading">
      <h2 id="general-heading">{t('developers.generalTitle')}</h2>
      <form onSubmit={submit}>
        <Field
          label={t('developers.name')}
          value={name}
          required
          maxLength={100}
          onChange={(event) => setName(event.target.value)}
        />
        <p className="hint">{t('developers.descriptionUnsupported')}</p>
        <ErrorNotice error={error} />
        {saved && <Notice tone="success">{t('developers.saved')}</Notice>}
        <Button type="submit" busy={busy}>
          {t('developers.saveGeneral')}
        </Button>
      </form>
    </section>
  );
}

function OAuthSection({
  app,
  clientSecret,
  onChanged,
}: {
  app: Application;
  clientSecret: string | undefined;
  onChanged: (app: Application, clientSecret?: string) => void;
}) {
  const { t } = useTranslation();
  const { api } = useApp();
  const withSudo = useSudo();
  const [uri, setUri] = useState('');
  const secret = useAction();
  const redirects = useAction();
  const clientType = useAction();
  // Shown at once; put back if the server refuses the change.
  const [isPublic, setPublic] = useState(app.public_client === true);

  const changeClientType = (next: boolean) => {
    setPublic(next);
    void clientType.run(async () => {
      try {
        onChanged(await api.applications.update(app.id, { public_client: next }));
      } catch (caught) {
        setPublic(!next);
        throw caught;
      }
    });
  };

  const resetSecret = () =>
    secret.run(async () => {
      const next = await withSudo((proof) => api.applications.resetSecret(app.id, proof), { always: true });
      onChanged(next, next.client_secret);
    });

  const saveRedirects = (list: string[]) =>
    redirects.run(async () => {
      onChanged(await api.applications.update(app.id, { redirect_uris: list }));
    });

  // A refused URI is said at the field (the catalogue's sentence for this code speaks of the consent page).
  const refused = redirects.error instanceof HearthApiError && redirects.error.displayCode() === 'INVALID_REDIRECT_URI';

  const add = (event: FormEvent) => {
    event.preventDefault();
    const value = uri.trim();
    if (!value) return;
    void saveRedirects([...app.redirect_uris.filter((existing) => existing !== value), value]).then(() => setUri(''));
  };

  return (
    <section aria-labelledby="oauth-heading">
      <h2 id="oauth-heading">{t('developers.oauthTitle')}</h2>
      <dl className="facts">
        <dt>{t('developers.clientId')}</dt>
        <dd>
          <code>{app.id}</code>
        </dd>
      </dl>
      <h3>{t('developers.clientSecretTitle')}</h3>
      <p>{t('developers.clientSecretIntro')}</p>
      {clientSecret && <SecretReveal label={t('developers.clientSecret')} value={clientSecret} />}
      <ErrorNotice error={secret.error} />
      <Button variant="secondary" busy={secret.busy} onClick={() => void resetSecret()}>
        {t('developers.resetSecret')}
      </Button>

      <h3>{t('developers.clientTypeTitle')}</h3>
      <label className="check">
        <input
          type="checkbox"
          checked={isPublic}
          disabled={clientType.busy}
          aria-describedby="public-client-hint"
          onChange={(event) => changeClientType(event.target.checked)}
        />{' '}
        {t('developers.publicClient')}
      </label>
      <p className="hint" id="public-client-hint">
        {t('developers.publicClientHint')}
      </p>
      <ErrorNotice error={clientType.error} />

      <h3>{t('developers.redirectTitle')}</h3>
      <p>{t('developers.redirectIntro')}</p>
      {app.redirect_uris.length === 0 ? (
        <p>{t('developers.noRedirects')}</p>
      ) : (
        <ul className="redirect-list">
          {app.redirect_uris.map((existing) => (
            <li key={existing}>
              <code>{existing}</code>{' '}
              <Button
                variant="secondary"
                disabled={redirects.busy}
                onClick={() => void saveRedirects(app.redirect_uris.filter((other) => other !== existing))}
              >
                {t('developers.removeRedirect', { uri: existing })}
              </Button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add}>
        <Field
          label={t('developers.newRedirect')}
          type="url"
          inputMode="url"
          placeholder="https://example.com/callback"
          value={uri}
          required
          error={refused ? t('developers.redirectRefused') : undefined}
          onChange={(event) => setUri(event.target.value)}
        />
        {!refused && <ErrorNotice error={redirects.error} />}
        <Button type="submit" busy={redirects.busy}>
          {t('developers.addRedirect')}
        </Button>
      </form>
    </section>
  );
}

function readAsDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

function BotSection({
  app,
  botToken,
  onChanged,
}: {
  app: Application;
  botToken: string | undefined;
  onChanged: (app: Application, botToken?: string) => void;
}) {
  const { t } = useTranslation();
  const { api, discovery } = useApp();
  const withSudo = useSudo();
  const bot = app.bot;
  const [username, setUsername] = useState(bot?.username ?? '');
  const [avatar, setAvatar] = useState<string | null | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const token = useAction();
  const profile = useAction();
  // Drawn 64 px square.
  const avatarUrl = useMemo(() => {
    const stored = userAvatar(bot);
    return stored ? imageUrl(discovery.endpoints.media, stored, 64) : null;
  }, [bot, discovery]);
  if (!bot) return null;

  const resetToken = () =>
    token.run(async () => {
      const answer = await withSudo((proof) => api.applications.resetBotToken(app.id, proof), { always: true });
      onChanged({ ...app, bot: { ...bot, ...answer.bot } }, answer.token);
    });

  const pick = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    setSaved(false);
    setAvatar(file ? await readAsDataUrl(file) : undefined);
  };

  const save = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    void profile.run(async () => {
      const changes: { username?: string; avatar?: string | null } = {};
      if (username.trim() !== bot.username) changes.username = username.trim();
      if (avatar !== undefined) changes.avatar = avatar;
      const updated = await api.applications.updateBot(app.id, changes);
      onChanged({ ...app, bot: { ...bot, ...updated } });
      setAvatar(undefined);
      setSaved(true);
    });
  };

  return (
    <section aria-labelledby="bot-heading">
      <h2 id="bot-heading">{t('developers.botTitle')}</h2>
      <p>{t('developers.botIntro')}</p>
      {botToken && <SecretReveal label={t('developers.botToken')} value={botToken} />}
      <ErrorNotice error={token.error} />
      <Button variant="secondary" busy={token.busy} onClick={() => void resetToken()}>
        {t('developers.resetToken')}
      </Button>

      <h3>{t('developers.botProfileTitle')}</h3>
      <form onSubmit={save}>
        <Field
          label={t('developers.botUsername')}
          value={username}
          required
          maxLength={32}
          autoComplete="off"
          onChange={(event) => setUsername(event.target.value)}
        />
        {avatar ? (
          <img className="avatar-preview" src={avatar} alt={t('developers.avatarPreview')} width={64} height={64} />
        ) : (
          avatarUrl &&
          avatar === undefined && (
            <img
              className="avatar-preview"
              src={avatarUrl}
              alt={t('developers.currentAvatar')}
              width={64}
              height={64}
            />
          )
        )}
        <div className="field">
          <label htmlFor="bot-avatar">{t('developers.botAvatar')}</label>
          <input
            id="bot-avatar"
            type="file"
            accept="image/png,image/jpeg,image/gif,image/webp"
            aria-describedby="bot-avatar-hint"
            onChange={(event) => void pick(event)}
          />
          <p id="bot-avatar-hint" className="hint">
            {t('developers.botAvatarHint')}
          </p>
        </div>
        {bot.avatar && avatar === undefined && (
          <Button variant="secondary" onClick={() => setAvatar(null)}>
            {t('developers.removeAvatar')}
          </Button>
        )}
        <ErrorNotice error={profile.error} />
        {saved && <Notice tone="success">{t('developers.botSaved')}</Notice>}
        <Button type="submit" busy={profile.busy}>
          {t('developers.saveBot')}
        </Button>
      </form>
    </section>
  );
}

function DeleteSection({ app }: { app: Application }) {
  const { t } = useTranslation();
  const { api, navigate } = useApp();
  const withSudo = useSudo();
  const { busy, error, run } = useAction();
  const remove = () =>
    run(async () => {
      await withSudo((proof) => api.applications.remove(app.id, proof), { always: true });
      navigate('/developers');
    });
  return (
    <section aria-labelledby="delete-heading">
      <h2 id="delete-heading">{t('developers.dangerTitle')}</h2>
      <p>{t('developers.dangerIntro')}</p>
      <ErrorNotice error={error} />
      <Button variant="danger" busy={busy} onClick={() => void remove()}>
        {t('developers.deleteApp')}
      </Button>
    </section>
  );
}
