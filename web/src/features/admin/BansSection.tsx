import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { IpBan } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { formatDate } from '../../i18n/format.ts';
import { RevocableTable } from './RevocableTable.tsx';
import { useAction } from './use-action.ts';

/** IP bans: the manual and automatic bans in force, a form to add one (address or CIDR, optional duration). */
export function BansSection() {
  const { t } = useTranslation();
  const { api } = useApp();
  const [bans, setBans] = useState<IpBan[] | null>(null);
  const [ip, setIp] = useState('');
  const [hours, setHours] = useState('');
  const list = useAction();
  const add = useAction();

  const load = () => list.run(async () => setBans((await api.admin.ipBans()).bans));
  // biome-ignore lint/correctness/useExhaustiveDependencies: loads once per mount
  useEffect(() => {
    void load();
  }, []);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void add.run(async () => {
      const value = ip.trim();
      await api.admin.addIpBan(value, hours.trim() ? Math.round(Number(hours) * 3600) : undefined);
      setIp('');
      setHours('');
      setBans((await api.admin.ipBans()).bans);
      return t('admin.banAdded', { ip: value });
    });
  };

  const remove = (target: string) =>
    list.run(async () => {
      await api.admin.removeIpBan(target);
      setBans((await api.admin.ipBans()).bans);
      return t('admin.banRemoved', { ip: target });
    });

  return (
    <>
      <form onSubmit={submit}>
        <Field
          label={t('admin.banIp')}
          hint={t('admin.banIpHint')}
          value={ip}
          required
          maxLength={64}
          spellCheck={false}
          onChange={(event) => setIp(event.target.value)}
        />
        <Field
          label={t('admin.banHours')}
          hint={t('admin.banHoursHint')}
          type="number"
          min={1}
          value={hours}
          onChange={(event) => setHours(event.target.value)}
        />
        <ErrorNotice error={add.error} />
        {add.done && <Notice tone="success">{add.done}</Notice>}
        <Button type="submit" busy={add.busy}>
          {t('admin.addBan')}
        </Button>
      </form>
      <ErrorNotice error={list.error} />
      {list.done && <Notice tone="success">{list.done}</Notice>}
      <RevocableTable
        label={t('admin.bansTitle')}
        items={bans}
        empty={t('admin.noBans')}
        columns={[
          { header: t('admin.banIp'), cell: (ban) => <code>{ban.ip}</code> },
          {
            header: t('admin.banKind'),
            cell: (ban) => (ban.kind === 'manual' ? t('admin.banKindManual') : t('admin.banKindAutomatic')),
          },
          {
            header: t('admin.banExpires'),
            cell: (ban) => (ban.expires_at ? formatDate(ban.expires_at, 'dateTime') : t('admin.banPermanent')),
          },
        ]}
        rowKey={(ban) => `${ban.kind}:${ban.ip}`}
        actionLabel={(ban) => t('admin.removeBan', { ip: ban.ip })}
        onAction={(ban) => void remove(ban.ip)}
        busy={list.busy}
      />
    </>
  );
}
