import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { WebauthnCredential } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { useSudo } from '../../components/SudoPrompt.tsx';
import { formatDate } from '../../i18n/format.ts';
import { useLoaded } from '../../lib/use-loaded.ts';
import { createCredential, webauthnSupported } from '../../lib/webauthn.ts';
import { passkeyError } from '../auth/passkey-error.ts';
import { useSectionAction } from './use-section-action.ts';

/**
 * Passkeys in the settings: the list with rename and remove (both sudo-gated), and adding one
 * (the registration options are sudo-gated, so the prompt asks for a password, a code or an existing passkey).
 */
export function PasskeySection() {
  const { t } = useTranslation();
  const { api, refreshUser } = useApp();
  const withSudo = useSudo();
  const [name, setName] = useState(() => t('settings.passkeyDefaultName'));
  const [renaming, setRenaming] = useState<string | null>(null);
  const [newName, setNewName] = useState('');
  const { busy, message, setMessage, error, setError, run } = useSectionAction(passkeyError);

  const [credentials, , load] = useLoaded(() => api.mfa.webauthnCredentials(), api, setError);

  const add = (event: FormEvent) => {
    event.preventDefault();
    void run('add', async () => {
      const options = await withSudo((proof) => api.mfa.webauthnRegistrationOptions(proof), { always: true });
      const { response, challenge } = await createCredential(options);
      await api.mfa.addWebauthnCredential(response, challenge, name.trim() || t('settings.passkeyDefaultName'));
      setMessage(t('settings.passkeyAddedNotice'));
      await load();
      await refreshUser();
    });
  };

  const rename = (event: FormEvent, credential: WebauthnCredential) => {
    event.preventDefault();
    void run(`rename:${credential.id}`, async () => {
      await withSudo((proof) => api.mfa.renameWebauthnCredential(credential.id, newName.trim(), proof), {
        always: true,
      });
      setRenaming(null);
      setMessage(t('settings.passkeyRenamed'));
      await load();
    });
  };

  const remove = (credential: WebauthnCredential) =>
    run(`remove:${credential.id}`, async () => {
      await withSudo((proof) => api.mfa.removeWebauthnCredential(credential.id, proof), { always: true });
      setMessage(t('settings.passkeyRemoved', { name: credential.name }));
      await load();
      await refreshUser();
    });

  return (
    <section aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading">{t('settings.passkeysTitle')}</h2>
      {credentials !== undefined && <p>{t('settings.passkeys', { count: credentials.length })}</p>}
      {credentials && credentials.length > 0 && (
        <ul className="passkey-list" aria-label={t('settings.passkeyListLabel')}>
          {credentials.map((credential) => (
            <li key={credential.id}>
              <strong>{credential.name}</strong>
              <span className="hint">
                {' '}
                · {t('settings.passkeyAdded', { date: formatDate(credential.created_at) })}
                {credential.last_used_at &&
                  ` · ${t('settings.lastUsed', { date: formatDate(credential.last_used_at, 'dateTime') })}`}
              </span>
              {renaming === credential.id ? (
                <form onSubmit={(event) => rename(event, credential)}>
                  <Field
                    label={t('settings.passkeyNewName', { name: credential.name })}
                    maxLength={100}
                    required
                    value={newName}
                    onChange={(event) => setNewName(event.target.value)}
                  />
                  <div className="actions">
                    <Button type="submit" busy={busy === `rename:${credential.id}`}>
                      {t('settings.passkeySaveName')}
                    </Button>
                    <Button variant="link" onClick={() => setRenaming(null)}>
                      {t('common.cancel')}
                    </Button>
                  </div>
                </form>
              ) : (
                <div className="actions">
                  <Button
                    variant="secondary"
                    aria-label={t('settings.passkeyRenameNamed', { name: credential.name })}
                    onClick={() => {
                      setRenaming(credential.id);
                      setNewName(credential.name);
                    }}
                  >
                    {t('settings.passkeyRename')}
                  </Button>
                  <Button
                    variant="danger"
                    busy={busy === `remove:${credential.id}`}
                    aria-label={t('settings.passkeyRemoveNamed', { name: credential.name })}
                    onClick={() => void remove(credential)}
                  >
                    {t('settings.passkeyRemove')}
                  </Button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      {message && <Notice tone="success">{message}</Notice>}
      <ErrorNotice error={error} />
      {webauthnSupported() && (
        <form onSubmit={add}>
          <Field
            label={t('settings.passkeyName')}
            maxLength={100}
            required
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
          <Button type="submit" variant="secondary" busy={busy === 'add'}>
            {t('settings.addPasskey')}
          </Button>
        </form>
      )}
    </section>
  );
}
