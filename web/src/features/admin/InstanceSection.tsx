import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { InstanceConfig } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { lines, useAction } from './use-action.ts';

/**
 * Instance settings: the registration mode and single sign-on (the client secret is write-only: empty keeps
 * the saved one). Email delivery and new-location approval come from the deployment and are only shown.
 */
export function InstanceSection() {
  const { t, i18n } = useTranslation();
  const { api } = useApp();
  const [config, setConfig] = useState<InstanceConfig | null>(null);
  const load = useAction();

  // biome-ignore lint/correctness/useExhaustiveDependencies: loads once per mount
  useEffect(() => {
    void load.run(async () => setConfig(await api.admin.instanceConfig()));
  }, []);

  return (
    <>
      <ErrorNotice error={load.error} />
      {config && (
        <>
          <RegistrationForm config={config} onSaved={setConfig} />
          <SsoForm config={config} onSaved={setConfig} />
          <section aria-labelledby="deployment-heading">
            <h2 id="deployment-heading">{t('admin.deploymentTitle')}</h2>
            <dl className="facts">
              <dt>{t('admin.emailDelivery')}</dt>
              <dd>
                {config.email.enabled ? t('admin.on') : t('admin.off')}
                {config.email.delivery.status === 'failing' && (
                  <span role="alert" className="notice error">
                    {t('admin.deliveryFailing', {
                      since: new Date(config.email.delivery.failing_since ?? Date.now()).toLocaleString(i18n.language),
                      error: config.email.delivery.last_error ?? '',
                    })}
                  </span>
                )}
              </dd>
              <dt>{t('admin.ipAuthorization')}</dt>
              <dd>{config.ip_authorization.enabled ? t('admin.on') : t('admin.off')}</dd>
            </dl>
          </section>
        </>
      )}
    </>
  );
}

function RegistrationForm({ config, onSaved }: { config: InstanceConfig; onSaved: (c: InstanceConfig) => void }) {
  const { t } = useTranslation();
  const { api } = useApp();
  const id = useId();
  const [mode, setMode] = useState(config.registration.mode);
  const save = useAction();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run(async () => {
      onSaved(await api.admin.updateInstanceConfig({ registration: { mode } }));
      return t('admin.saved');
    });
  };
  return (
    <section aria-labelledby="registration-heading">
      <h2 id="registration-heading">{t('admin.registrationTitle')}</h2>
      <form onSubmit={submit}>
        <div className="field">
          <label htmlFor={id}>{t('admin.registrationMode')}</label>
          <select id={id} value={mode} onChange={(event) => setMode(event.target.value as typeof mode)}>
            <option value="open">{t('admin.modeOpen')}</option>
            <option value="approval">{t('admin.modeApproval')}</option>
            <option value="closed">{t('admin.modeClosed')}</option>
          </select>
        </div>
        <ErrorNotice error={save.error} />
        {save.done && <Notice tone="success">{save.done}</Notice>}
        <Button type="submit" busy={save.busy}>
          {t('admin.saveRegistration')}
        </Button>
      </form>
    </section>
  );
}

function Check({ label, checked, onChange }: { label: string; checked: boolean; onChange: (on: boolean) => void }) {
  return (
    <label className="check">
      <input type="checkbox" checked={checked} onChange={(event) => onChange(event.target.checked)} /> {label}
    </label>
  );
}

function SsoForm({ config, onSaved }: { config: InstanceConfig; onSaved: (c: InstanceConfig) => void }) {
  const { t } = useTranslation();
  const { api } = useApp();
  const domainsId = useId();
  const sso = config.sso;
  const [enabled, setEnabled] = useState(sso.enabled);
  const [enforced, setEnforced] = useState(sso.enforced);
  const [displayName, setDisplayName] = useState(sso.display_name ?? '');
  const [issuer, setIssuer] = useState(sso.issuer ?? '');
  const [clientId, setClientId] = useState(sso.client_id ?? '');
  const [clientSecret, setClientSecret] = useState('');
  const [scope, setScope] = useState(sso.scope ?? '');
  const [domains, setDomains] = useState(sso.allowed_domains.join('\n'));
  const [autoProvision, setAutoProvision] = useState(sso.auto_provision);
  const [linkByEmail, setLinkByEmail] = useState(sso.link_by_email);
  const save = useAction();
  const test = useAction();

  // The issuer as typed, merged onto the saved settings by the server: nothing is saved by a test.
  const runTest = () =>
    void test.run(async () => {
      const result = await api.admin.testSso({ issuer: issuer.trim() });
      if (result.ok) {
        return t('admin.ssoTestOk', { authorization: result.authorization_endpoint, count: result.jwks_keys });
      }
      return t('admin.ssoTestFailed', {
        step: t(`admin.ssoStep_${result.step}`),
        reason: t(`admin.ssoReason_${result.reason}`),
      });
    });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void save.run(async () => {
      const patch: Record<string, unknown> = {
        enabled,
        enforced,
        display_name: displayName.trim(),
        issuer: issuer.trim(),
        client_id: clientId.trim(),
        scope: scope.trim(),
        allowed_domains: lines(domains),
        auto_provision: autoProvision,
        link_by_email: linkByEmail,
      };
      if (clientSecret) patch.client_secret = clientSecret;
      onSaved(await api.admin.updateInstanceConfig({ sso: patch }));
      // The form keeps what was typed (the server saved exactly that) and its "Saved."; only the write-only
      // secret empties, its hint now saying one is set.
      setClientSecret('');
      return t('admin.saved');
    });
  };

  return (
    <section aria-labelledby="sso-heading">
      <h2 id="sso-heading">{t('admin.ssoTitle')}</h2>
      <form onSubmit={submit}>
        <Check label={t('admin.ssoEnabled')} checked={enabled} onChange={setEnabled} />
        <Check label={t('admin.ssoEnforced')} checked={enforced} onChange={setEnforced} />
        <Field
          label={t('admin.ssoDisplayName')}
          value={displayName}
          maxLength={100}
          onChange={(event) => setDisplayName(event.target.value)}
        />
        <Field
          label={t('admin.ssoIssuer')}
          type="url"
          value={issuer}
          spellCheck={false}
          onChange={(event) => setIssuer(event.target.value)}
        />
        <Field
          label={t('admin.ssoClientId')}
          value={clientId}
          spellCheck={false}
          autoComplete="off"
          onChange={(event) => setClientId(event.target.value)}
        />
        <Field
          label={t('admin.ssoClientSecret')}
          hint={sso.client_secret_set ? t('admin.ssoClientSecretSet') : t('admin.ssoClientSecretUnset')}
          type="password"
          autoComplete="new-password"
          value={clientSecret}
          onChange={(event) => setClientSecret(event.target.value)}
        />
        <Field
          label={t('admin.ssoScope')}
          value={scope}
          spellCheck={false}
          onChange={(event) => setScope(event.target.value)}
        />
        <div className="field">
          <label htmlFor={domainsId}>{t('admin.ssoAllowedDomains')}</label>
          <textarea
            id={domainsId}
            rows={3}
            value={domains}
            spellCheck={false}
            aria-describedby={`${domainsId}-hint`}
            onChange={(event) => setDomains(event.target.value)}
          />
          <p id={`${domainsId}-hint`} className="hint">
            {t('admin.ssoAllowedDomainsHint')}
          </p>
        </div>
        <Check label={t('admin.ssoAutoProvision')} checked={autoProvision} onChange={setAutoProvision} />
        <Check label={t('admin.ssoLinkByEmail')} checked={linkByEmail} onChange={setLinkByEmail} />
        {sso.redirect_uri && (
          <dl className="facts">
            <dt>{t('admin.ssoRedirectUri')}</dt>
            <dd>
              <code>{sso.redirect_uri}</code>
            </dd>
          </dl>
        )}
        <div className="field">
          <Button type="button" variant="secondary" busy={test.busy} onClick={runTest}>
            {t('admin.ssoTest')}
          </Button>
          <ErrorNotice error={test.error} />
          {test.done && (
            <p role="status" className="notice">
              {test.done}
            </p>
          )}
        </div>
        <ErrorNotice error={save.error} />
        {save.done && <Notice tone="success">{save.done}</Notice>}
        <Button type="submit" busy={save.busy}>
          {t('admin.saveSso')}
        </Button>
      </form>
    </section>
  );
}
