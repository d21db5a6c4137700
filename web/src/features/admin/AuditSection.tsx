import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { AuditEntry, AuditQuery } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { formatDate } from '../../i18n/format.ts';
import { useAction } from './use-action.ts';

const TARGET_TYPES = ['user', 'admin_api_key', 'ip_ban', 'instance_config', 'report'];
const PAGE = 50;

/** The audit log, newest first, filtered by action, target and administrator; older pages on demand. */
export function AuditSection() {
  const { t } = useTranslation();
  const { api } = useApp();
  const typeId = useId();
  const [action, setAction] = useState('');
  const [targetType, setTargetType] = useState('');
  const [targetId, setTargetId] = useState('');
  const [adminId, setAdminId] = useState('');
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [total, setTotal] = useState(0);
  const search = useAction();

  const query = (): AuditQuery => ({
    limit: PAGE,
    ...(action.trim() ? { action: action.trim() } : {}),
    ...(targetType ? { target_type: targetType } : {}),
    ...(targetId.trim() ? { target_id: targetId.trim() } : {}),
    ...(adminId.trim() ? { admin_user_id: adminId.trim() } : {}),
  });

  const load = (before?: string) =>
    search.run(async () => {
      const page = await api.admin.auditLog({ ...query(), ...(before ? { before } : {}) });
      setEntries((current) => (before ? [...(current ?? []), ...page.logs] : page.logs));
      setTotal(page.total);
    });

  // biome-ignore lint/correctness/useExhaustiveDependencies: the newest entries once, on opening
  useEffect(() => {
    void load();
  }, []);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void load();
  };

  return (
    <>
      <form onSubmit={submit}>
        <fieldset>
          <legend>{t('admin.filters')}</legend>
          <Field
            label={t('admin.filterAction')}
            hint={t('admin.filterActionHint')}
            value={action}
            maxLength={64}
            spellCheck={false}
            onChange={(event) => setAction(event.target.value)}
          />
          <div className="field">
            <label htmlFor={typeId}>{t('admin.filterTargetType')}</label>
            <select id={typeId} value={targetType} onChange={(event) => setTargetType(event.target.value)}>
              <option value="">{t('admin.filterTargetTypeAny')}</option>
              {TARGET_TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </div>
          <Field
            label={t('admin.filterTargetId')}
            value={targetId}
            maxLength={128}
            spellCheck={false}
            onChange={(event) => setTargetId(event.target.value)}
          />
          <Field
            label={t('admin.filterAdmin')}
            value={adminId}
            inputMode="numeric"
            spellCheck={false}
            onChange={(event) => setAdminId(event.target.value)}
          />
          <Button type="submit" busy={search.busy}>
            {t('admin.applyFilters')}
          </Button>
        </fieldset>
      </form>
      <ErrorNotice error={search.error} />
      {entries && (
        <p role="status" aria-live="polite">
          {t('admin.total', { count: total })}
        </p>
      )}
      {entries?.length === 0 && <p>{t('admin.noEntries')}</p>}
      {entries && entries.length > 0 && (
        <table className="data">
          <thead>
            <tr>
              <th scope="col">{t('admin.when')}</th>
              <th scope="col">{t('admin.who')}</th>
              <th scope="col">{t('admin.what')}</th>
              <th scope="col">{t('admin.target')}</th>
              <th scope="col">{t('admin.reason')}</th>
              <th scope="col">{t('admin.details')}</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.log_id}>
                <td>{formatDate(entry.created_at, 'dateTime')}</td>
                <td>
                  <code>{entry.admin_user_id}</code> ({entry.credential_kind})
                </td>
                <td>
                  <code>{entry.action}</code>
                </td>
                <td>
                  {entry.target_type} <code>{entry.target_id}</code>
                </td>
                <td>{entry.audit_log_reason ?? '—'}</td>
                <td>
                  <code className="audit-details">
                    {JSON.stringify({ metadata: entry.metadata, before: entry.before, after: entry.after })}
                  </code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {entries && entries.length < total && (
        <Button variant="secondary" busy={search.busy} onClick={() => void load(entries.at(-1)?.log_id)}>
          {t('admin.older')}
        </Button>
      )}
    </>
  );
}
