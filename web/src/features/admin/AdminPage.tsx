import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Link } from '../../components/Link.tsx';
import { PageLayout } from '../../components/PageLayout.tsx';
import { canOpenAdmin } from '../../lib/acl.ts';
import { CHAT_HOME, useLocation } from '../../shell/router.tsx';
import { AuditSection } from './AuditSection.tsx';
import { BansSection } from './BansSection.tsx';
import { InstanceSection } from './InstanceSection.tsx';
import { KeysSection } from './KeysSection.tsx';
import { ReportsSection } from './ReportsSection.tsx';
import { UsersSection } from './UsersSection.tsx';

/** The panel's pages; each is its own URL with its own `<h1>`. */
const SECTIONS = [
  { path: '/admin', key: 'users' },
  { path: '/admin/reports', key: 'reports' },
  { path: '/admin/bans', key: 'bans' },
  { path: '/admin/audit-log', key: 'audit' },
  { path: '/admin/settings', key: 'settings' },
  { path: '/admin/api-keys', key: 'keys' },
] as const;

/**
 * `/admin…`: the admin panel for accounts holding `admin:authenticate` (or `*`). It calls the Admin API with
 * the session token, which the Admin API accepts (docs/admin.md#credentials-and-checks); each route still checks its own ACL, and a missing
 * one is said through the error notice.
 */
export default function AdminPage() {
  const { t } = useTranslation();
  const { user } = useApp();
  const { pathname } = useLocation();
  if (!canOpenAdmin(user)) {
    return (
      <PageLayout title={t('admin.title')}>
        <p>{t('admin.notAdmin')}</p>
        <p>
          <Link href={CHAT_HOME}>{t('admin.backHome')}</Link>
        </p>
      </PageLayout>
    );
  }
  const current = SECTIONS.find((section) => section.path === pathname) ?? SECTIONS[0];
  const titles = {
    users: t('admin.usersTitle'),
    reports: t('admin.reportsTitle'),
    bans: t('admin.bansTitle'),
    audit: t('admin.auditTitle'),
    settings: t('admin.settingsTitle'),
    keys: t('admin.keysTitle'),
  };
  return (
    <PageLayout title={`${titles[current.key]} · ${t('admin.title')}`} narrow={false}>
      <nav className="admin-nav" aria-label={t('admin.navLabel')}>
        <ul>
          {SECTIONS.map((section) => (
            <li key={section.key}>
              <Link href={section.path} aria-current={section.key === current.key ? 'page' : undefined}>
                {titles[section.key]}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {current.key === 'users' && <UsersSection />}
      {current.key === 'reports' && <ReportsSection />}
      {current.key === 'bans' && <BansSection />}
      {current.key === 'audit' && <AuditSection />}
      {current.key === 'settings' && <InstanceSection />}
      {current.key === 'keys' && <KeysSection />}
    </PageLayout>
  );
}
