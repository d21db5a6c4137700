import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { SudoCancelled, useSudo } from '../../components/SudoPrompt.tsx';
import { createCredential, webauthnSupported } from '../../lib/webauthn.ts';
import { passkeyError } from '../auth/passkey-error.ts';

/**
 * Passkeys on the landing page until the settings pages arrive: how many there are, and adding one (the
 * registration options are sudo-gated, so the prompt asks for a password, a code or an existing passkey).
 */
export function PasskeySection() {
  const { t } = useTranslation();
  const { api } = useApp();
  const withSudo = useSudo();
  const [count, setCount] = useState<number | null>(null);
  const [name, setName] = useState(() => t('home.passkeyDefaultName'));
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const load = useCallback(async () => {
    try {
      setCount((await api.mfa.webauthnCredentials()).length);
    } catch (caught) {
      setError(caught);
    }
  }, [api]);

  useEffect(() => {
    void load();
  }, [load]);

  const add = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setAdded(false);
    try {
      const options = await withSudo((proof) => api.mfa.webauthnRegistrationOptions(proof));
      const { response, challenge } = await createCredential(options);
      await api.mfa.addWebauthnCredential(response, challenge, name.trim() || t('home.passkeyDefaultName'));
      setAdded(true);
      await load();
    } catch (caught) {
      if (!(caught instanceof SudoCancelled)) setError(passkeyError(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="security-heading">
      <h2 id="security-heading">{t('home.securityTitle')}</h2>
      {count !== null && <p>{t('home.passkeys', { count })}</p>}
      {added && <Notice tone="success">{t('home.passkeyAdded')}</Notice>}
      <ErrorNotice error={error} />
      {webauthnSupported() && (
        <form onSubmit={add}>
          <Field
            label={t('home.passkeyName')}
            maxLength={100}
            required
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
          <Button type="submit" variant="secondary" busy={busy}>
            {t('home.addPasskey')}
          </Button>
        </form>
      )}
    </section>
  );
}
