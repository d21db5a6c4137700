import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { AdminApiKey } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { SecretReveal } from '../../components/SecretReveal.tsx';
import { useSudo } from '../../components/SudoPrompt.tsx';
import { formatDate } from '../../i18n/format.ts';
import { RevocableTable } from './RevocableTable.tsx';
import { lines, useAction } from './use-action.ts';

/** The person's own Admin API keys: list, create (sudo prompt; the key shown once with a copy button), revoke. */
export function KeysSection() {
  const { t } = useTranslation();
  const { api } = useApp();
  const withSudo = useSudo();
  const aclsId = useId();
  const [keys, setKeys] = useState<AdminApiKey[] | null>(null);
  const [name, setName] = useState('');
  const [acls, setAcls] = useState('');
  const [days, setDays] = useState('');
  const [minted, setMinted] = useState<string | null>(null);
  const list = useAction();
  const create = useAction();

  // biome-ignore lint/correctness/useExhaustiveDependencies: loads once per mount
  useEffect(() => {
    void list.run(async () => setKeys(await api.admin.apiKeys()));
  }, []);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setMinted(null);
    void create.run(async () => {
      const body = {
        name: name.trim(),
        acls: lines(acls),
        ...(days.trim() ? { expires_in_days: Number(days) } : {}),
      };
      const key = await withSudo((proof) => api.admin.createApiKey(body, proof), { always: true });
      setMinted(key.key);
      setName('');
      setAcls('');
      setDays('');
      setKeys(await api.admin.apiKeys());
      return t('admin.keyCreated', { name: key.name });
    });
  };

  const revoke = (key: AdminApiKey) =>
    list.run(async () => {
      await api.admin.revokeApiKey(key.key_id);
      setKeys(await api.admin.apiKeys());
      return t('admin.keyRevoked', { name: key.name });
    });

  return (
    <>
      <p>{t('admin.keysIntro')}</p>
      <form onSubmit={submit}>
        <Field
          label={t('admin.keyName')}
          value={name}
          required
          maxLength={100}
          onChange={(event) => setName(event.target.value)}
        />
        <div className="field">
          <label htmlFor={aclsId}>{t('admin.keyAcls')}</label>
          <textarea
            id={aclsId}
            rows={3}
            required
            value={acls}
            spellCheck={false}
            aria-describedby={`${aclsId}-hint`}
            onChange={(event) => setAcls(event.target.value)}
          />
          <p id={`${aclsId}-hint`} className="hint">
            {t('admin.aclsHint')}
          </p>
        </div>
        <Field
          label={t('admin.keyExpires')}
          hint={t('admin.keyExpiresHint')}
          type="number"
          min={1}
          max={365}
          value={days}
          onChange={(event) => setDays(event.target.value)}
        />
        <ErrorNotice error={create.error} />
        {create.done && <Notice tone="success">{create.done}</Notice>}
        {minted && <SecretReveal label={t('admin.newKey')} value={minted} />}
        <Button type="submit" busy={create.busy}>
          {t('admin.createKey')}
        </Button>
      </form>
      <ErrorNotice error={list.error} />
      {list.done && <Notice tone="success">{list.done}</Notice>}
      <RevocableTable
        label={t('admin.keysTitle')}
        items={keys}
        empty={t('admin.noKeys')}
        columns={[
          { header: t('admin.keyName'), cell: (key) => key.name },
          { header: t('admin.keyRights'), cell: (key) => <code>{key.acls.join(', ')}</code> },
          { header: t('admin.keyCreatedAt'), cell: (key) => formatDate(key.created_at, 'dateTime') },
          {
            header: t('admin.keyLastUsed'),
            cell: (key) => (key.last_used_at ? formatDate(key.last_used_at, 'dateTime') : t('admin.never')),
          },
          {
            header: t('admin.keyExpiresAt'),
            cell: (key) => (key.expires_at ? formatDate(key.expires_at, 'dateTime') : t('admin.never')),
          },
        ]}
        rowKey={(key) => key.key_id}
        actionLabel={(key) => t('admin.revokeKey', { name: key.name })}
        onAction={(key) => void revoke(key)}
        busy={list.busy}
      />
    </>
  );
}
