import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { LinkResultPage } from './LinkResultPage.tsx';

/**
 * `/authorize-ip#token=…` from the new-location email. Approving here publishes the held session to the tab
 * that is waiting (IpAuthorizationWait); this page itself signs nobody in.
 */
export default function AuthorizeIpPage() {
  const { t } = useTranslation();
  const { api } = useApp();
  const run = useCallback((token: string) => api.auth.authorizeIp(token), [api]);
  return (
    <LinkResultPage
      title={t('authorizeIp.title')}
      working={t('authorizeIp.working')}
      done={t('authorizeIp.done')}
      failed={t('authorizeIp.failed')}
      run={run}
    />
  );
}
