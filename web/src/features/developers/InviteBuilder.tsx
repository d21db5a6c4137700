import { useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { PERMISSION_BITS, type PermissionName } from '../../lib/permissions.ts';

const COMMANDS_SCOPE = 'applications.commands';

/**
 * The bot's invite link: permission checkboxes add up to the `permissions` integer of a
 * `<webapp>/oauth2/authorize?client_id=…&scope=bot…&permissions=…` link (the consent page it opens asks the
 * person for a community). `applications.commands` is offered when the server lists it among the scopes.
 */
export function InviteBuilder({
  applicationId,
  supportedScopes,
}: {
  applicationId: string;
  supportedScopes: string[];
}) {
  const { t } = useTranslation();
  const { discovery } = useApp();
  const urlId = useId();
  const [chosen, setChosen] = useState<Set<PermissionName>>(() => new Set());
  const offersCommands = supportedScopes.includes(COMMANDS_SCOPE);
  const [commands, setCommands] = useState(true);

  const permissions = useMemo(
    () => [...chosen].reduce((sum, name) => sum | (1n << PERMISSION_BITS[name]), 0n).toString(),
    [chosen],
  );
  const url = useMemo(() => {
    const scopes = ['bot', ...(offersCommands && commands ? [COMMANDS_SCOPE] : [])];
    const query = new URLSearchParams({ client_id: applicationId, scope: scopes.join(' '), permissions });
    return `${discovery.endpoints.webapp}/oauth2/authorize?${query.toString()}`;
  }, [applicationId, commands, discovery, offersCommands, permissions]);

  const toggle = (name: PermissionName, on: boolean) =>
    setChosen((current) => {
      const next = new Set(current);
      if (on) next.add(name);
      else next.delete(name);
      return next;
    });

  return (
    <section aria-labelledby="invite-heading">
      <h2 id="invite-heading">{t('developers.inviteTitle')}</h2>
      <p>{t('developers.inviteIntro')}</p>
      <fieldset>
        <legend>{t('developers.scopesLegend')}</legend>
        <label className="check">
          <input type="checkbox" checked disabled /> {t('developers.scopeBot')}
        </label>
        {offersCommands && (
          <label className="check">
            <input type="checkbox" checked={commands} onChange={(event) => setCommands(event.target.checked)} />{' '}
            {t('developers.scopeCommands')}
          </label>
        )}
      </fieldset>
      <fieldset className="permission-grid">
        <legend>{t('developers.permissionsLegend')}</legend>
        {(Object.keys(PERMISSION_BITS) as PermissionName[]).map((name) => (
          <label key={name} className="check">
            <input
              type="checkbox"
              checked={chosen.has(name)}
              onChange={(event) => toggle(name, event.target.checked)}
            />{' '}
            {t(`permissions.${name}`)}
          </label>
        ))}
      </fieldset>
      <p aria-live="polite">{t('developers.permissionsValue', { value: permissions })}</p>
      <div className="field">
        <label htmlFor={urlId}>{t('developers.inviteUrl')}</label>
        <input id={urlId} readOnly value={url} spellCheck={false} onFocus={(event) => event.target.select()} />
      </div>
      <p>
        <a href={url}>{t('developers.openInvite')}</a>
      </p>
    </section>
  );
}
