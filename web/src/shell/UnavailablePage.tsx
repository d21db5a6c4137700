import { useTranslation } from 'react-i18next';
import { Button } from '../components/Button.tsx';
import { ErrorNotice } from '../components/ErrorNotice.tsx';
import { PageLayout } from '../components/PageLayout.tsx';

/** Signed in, but the account could not be loaded (network, 5xx): say so and retry, never sign out. */
export function UnavailablePage({ error, retry }: { error: unknown; retry: () => void }) {
  const { t } = useTranslation();
  return (
    <PageLayout title={t('app.unavailableTitle')}>
      <ErrorNotice error={error} />
      <Button onClick={retry}>{t('app.retry')}</Button>
    </PageLayout>
  );
}
