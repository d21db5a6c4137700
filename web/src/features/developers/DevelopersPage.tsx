import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Application } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { handOver } from './handoff.ts';

/** `/developers`: the person's applications and a form to create one (its secrets then show once on its page). */
export default function DevelopersPage() {
  const { t } = useTranslation();
  const { api, navigate } = useApp();
  const [apps, setApps] = useState<Application[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    api.applications.list().then(setApps, setLoadError);
  }, [api]);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const app = await api.applications.create(name.trim());
      handOver(app.id, { clientSecret: app.client_secret, botToken: app.bot?.token });
      navigate(`/developers/applications/${app.id}`);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };

  return (
    <PageLayout title={t('developers.title')} narrow={false}>
      <p>{t('developers.intro')}</p>
      <section aria-labelledby="apps-heading">
        <h2 id="apps-heading">{t('developers.listTitle')}</h2>
        <ErrorNotice error={loadError} />
        {apps === null && !loadError && <p>{t('app.loading')}</p>}
        {apps?.length === 0 && <p>{t('developers.none')}</p>}
        {apps && apps.length > 0 && (
          <ul className="app-list">
            {apps.map((app) => (
              <li key={app.id}>
                <Link href={`/developers/applications/${app.id}`}>{app.name}</Link>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="create-heading">
        <h2 id="create-heading">{t('developers.createTitle')}</h2>
        <form onSubmit={(event) => void create(event)}>
          <Field
            label={t('developers.name')}
            value={name}
            required
            maxLength={100}
            onChange={(event) => setName(event.target.value)}
          />
          <ErrorNotice error={error} />
          <Button type="submit" busy={busy}>
            {t('developers.create')}
          </Button>
        </form>
      </section>
    </PageLayout>
  );
}
