import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { AdminReport, ReportStatus } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { formatDate } from '../../i18n/format.ts';
import { guildIcon, type ImageSource, userAvatar } from '../../lib/media.ts';
import { useAction } from './use-action.ts';

const PAGE = 50;
const STATUSES: readonly ReportStatus[] = ['open', 'resolved', 'dismissed'];

/** What was reported, in one line, from the snapshot taken when the report was filed (docs/safety.md). */
function useTargetSummary() {
  const { t } = useTranslation();
  return (report: AdminReport): string => {
    const snap = report.snapshot as {
      content?: string;
      author?: { username?: string };
      username?: string;
      name?: string;
    };
    if (report.target_type === 'message')
      return t('admin.reportMessageSummary', { author: snap.author?.username ?? '?', content: snap.content ?? '' });
    if (report.target_type === 'user') return t('admin.reportUserSummary', { name: snap.username ?? report.target_id });
    return t('admin.reportGuildSummary', { name: snap.name ?? report.target_id });
  };
}

/**
 * The picture of what was reported, from the snapshot (docs/safety.md#evidence-is-kept): a user's avatar, a
 * message author's, a guild's icon; the hash names the version stored when the report was filed.
 */
function targetPicture(report: AdminReport): ImageSource | null {
  const snap = report.snapshot as {
    id?: string;
    avatar?: string | null;
    icon?: string | null;
    author?: { id?: string; avatar?: string | null };
  };
  if (report.target_type === 'message')
    return snap.author?.id ? userAvatar({ id: snap.author.id, avatar: snap.author.avatar }) : null;
  const id = snap.id ?? report.target_id;
  if (report.target_type === 'user') return userAvatar({ id, avatar: snap.avatar });
  return guildIcon({ id, icon: snap.icon });
}

/** The report queue: open reports first (other statuses on demand), each resolvable or dismissable with a note. */
export function ReportsSection() {
  const { t } = useTranslation();
  const { api } = useApp();
  const statusId = useId();
  const [status, setStatus] = useState<ReportStatus>('open');
  const [reports, setReports] = useState<AdminReport[] | null>(null);
  const [total, setTotal] = useState(0);
  const list = useAction();

  const load = (which: ReportStatus, before?: string) =>
    list.run(async () => {
      const page = await api.admin.reports({ status: which, limit: PAGE, ...(before ? { before } : {}) });
      setReports((current) => (before ? [...(current ?? []), ...page.reports] : page.reports));
      setTotal(page.total);
    });

  // biome-ignore lint/correctness/useExhaustiveDependencies: reloads when the status filter changes
  useEffect(() => {
    void load(status);
  }, [status]);

  // A closed report stays in view with its outcome until the list is loaded again.
  const closed = (report: AdminReport) =>
    setReports((current) => (current ?? []).map((r) => (r.id === report.id ? report : r)));

  return (
    <>
      <div className="field">
        <label htmlFor={statusId}>{t('admin.reportStatusFilter')}</label>
        <select id={statusId} value={status} onChange={(event) => setStatus(event.target.value as ReportStatus)}>
          {STATUSES.map((value) => (
            <option key={value} value={value}>
              {t(`admin.reportStatus.${value}`)}
            </option>
          ))}
        </select>
      </div>
      <ErrorNotice error={list.error} />
      {reports?.length === 0 && <p>{t('admin.noReports')}</p>}
      {reports && reports.length > 0 && (
        <>
          <p>{t('admin.reportTotal', { count: total })}</p>
          <ul className="report-list">
            {reports.map((report) => (
              <li key={report.id}>
                <ReportCard report={report} onClosed={closed} />
              </li>
            ))}
          </ul>
        </>
      )}
      {reports && reports.length < total && (
        <Button variant="secondary" busy={list.busy} onClick={() => void load(status, reports.at(-1)?.id)}>
          {t('admin.olderReports')}
        </Button>
      )}
    </>
  );
}

function ReportCard({ report, onClosed }: { report: AdminReport; onClosed: (report: AdminReport) => void }) {
  const { t } = useTranslation();
  const { api } = useApp();
  const headingId = useId();
  const noteId = useId();
  const summary = useTargetSummary();
  const [note, setNote] = useState('');
  const action = useAction();
  const reporter = report.reporter?.global_name ?? report.reporter?.username ?? report.reporter_id;

  const close = (outcome: 'resolve' | 'dismiss') =>
    action.run(async () => {
      onClosed(await api.admin.closeReport(report.id, outcome, note));
    });

  return (
    <article aria-labelledby={headingId} className="report-card">
      <h2 id={headingId} className="with-picture">
        <Avatar source={report.reporter ? userAvatar(report.reporter) : null} name={reporter} size={32} />
        {t('admin.reportHeading', {
          kind: t(`admin.reportKind.${report.target_type}`),
          reporter,
          date: formatDate(report.created_at, 'dateTime'),
        })}
      </h2>
      <dl>
        <dt>{t('admin.reportReason')}</dt>
        <dd>{t(`chat.reportCategory.${report.category}`)}</dd>
        <dt>{t('admin.reportTarget')}</dt>
        <dd className="with-picture">
          <Avatar source={targetPicture(report)} name={summary(report)} size={32} />
          {summary(report)}
        </dd>
        {report.description && (
          <>
            <dt>{t('admin.reportDescription')}</dt>
            <dd>{report.description}</dd>
          </>
        )}
        {report.resolution_note && (
          <>
            <dt>{t('admin.reportNote')}</dt>
            <dd>{report.resolution_note}</dd>
          </>
        )}
      </dl>
      {report.status !== 'open' && (
        <Notice tone="success">
          {report.status === 'resolved' ? t('admin.reportResolved') : t('admin.reportDismissed')}
        </Notice>
      )}
      {report.status === 'open' && (
        <>
          <div className="field">
            <label htmlFor={noteId}>{t('admin.reportNote')}</label>
            <textarea id={noteId} rows={2} maxLength={1000} value={note} onChange={(e) => setNote(e.target.value)} />
          </div>
          <ErrorNotice error={action.error} />
          <div className="actions">
            <Button busy={action.busy} onClick={() => void close('resolve')}>
              {t('admin.resolveReport')}
            </Button>
            <Button variant="secondary" disabled={action.busy} onClick={() => void close('dismiss')}>
              {t('admin.dismissReport')}
            </Button>
          </div>
        </>
      )}
    </article>
  );
}
