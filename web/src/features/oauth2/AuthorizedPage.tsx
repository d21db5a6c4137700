import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Notice } from '../../components/ErrorNotice.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { CHAT_HOME } from '../../shell/router.tsx';

/** Where a consent without a redirect URI (a bot added to a community) ends. */
export default function AuthorizedPage() {
  const { t } = useTranslation();
  const { user } = useApp();
  return (
    <PageLayout title={t('oauth.authorizedTitle')}>
      <Notice tone="success">{t('oauth.authorizedBody')}</Notice>
      {user && (
        <p>
          <Link href={CHAT_HOME}>{t('app.backHome')}</Link>
        </p>
      )}
    </PageLayout>
  );
}
