import { useTranslation } from 'react-i18next';
import { Link } from '../components/Link.tsx';
import { PageLayout } from '../components/PageLayout.tsx';

export function NotFoundPage() {
  const { t } = useTranslation();
  return (
    <PageLayout title={t('app.notFoundTitle')}>
      <p>{t('app.notFoundBody')}</p>
      <p>
        <Link href="/">{t('app.backHome')}</Link>
      </p>
    </PageLayout>
  );
}
