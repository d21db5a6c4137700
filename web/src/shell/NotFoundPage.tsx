import { useTranslation } from 'react-i18next';
import { Link } from '../components/Link.tsx';
import { PageLayout } from '../components/PageLayout.tsx';
import { CHAT_HOME } from './router.tsx';

export function NotFoundPage() {
  const { t } = useTranslation();
  return (
    <PageLayout title={t('app.notFoundTitle')}>
      <p>{t('app.notFoundBody')}</p>
      <p>
        <Link href={CHAT_HOME}>{t('app.backHome')}</Link>
      </p>
    </PageLayout>
  );
}
