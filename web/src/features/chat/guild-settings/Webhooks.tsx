import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Webhook } from '../../../api/guild-admin.ts';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../../components/ErrorNotice.tsx';
import { Field } from '../../../components/Field.tsx';
import { SecretReveal } from '../../../components/SecretReveal.tsx';
import { useChat } from '../context.ts';
import { useGuildAdmin, useRun } from './shared.ts';

/**
 * The guild's incoming webhooks: the list (name, channel, creator), create one for a text channel (its URL shown
 * once, with a copy button: the server keeps only the token's hash), delete (docs/web.md#chat-featureschat-issue-18, the server settings table).
 */
export function Webhooks({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const admin = useGuildAdmin();
  const store = useChat();
  const channelId = useId();
  const textChannels = store.guildChannels(guildId).filter((channel) => channel.type === 0);
  const [webhooks, setWebhooks] = useState<Webhook[] | null>(null);
  const [name, setName] = useState('');
  const [channel, setChannel] = useState(textChannels[0]?.id ?? '');
  const [created, setCreated] = useState<Webhook | null>(null);
  const [deleted, setDeleted] = useState<string | null>(null);
  const action = useRun();
  const reload = async () => setWebhooks(await admin.webhooks(guildId));
  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per guild
  useEffect(() => {
    void action.run(reload);
  }, [guildId]);
  const label = (webhook: Webhook) => webhook.name ?? t('guildSettings.webhooks.unnamed');
  const channelName = (id: string) => store.channels.get(id)?.name ?? id;

  const create = (event: FormEvent) => {
    event.preventDefault();
    setDeleted(null);
    void action.run(async () => {
      setCreated(await admin.createWebhook(channel, name.trim()));
      setName('');
      await reload();
    });
  };

  return (
    <div>
      <p>{t('guildSettings.webhooks.intro')}</p>
      <ErrorNotice error={action.error} />
      {webhooks && webhooks.length === 0 && <p>{t('guildSettings.webhooks.none')}</p>}
      {webhooks && webhooks.length > 0 && (
        <ul className="settings-list" aria-label={t('guildSettings.webhooks.list')}>
          {webhooks.map((webhook) => (
            <li key={webhook.id}>
              <strong>{label(webhook)}</strong>{' '}
              {t('guildSettings.webhooks.postsIn', { channel: channelName(webhook.channel_id) })}
              {webhook.user && ` · ${webhook.user.global_name ?? webhook.user.username}`}{' '}
              <Button
                variant="danger"
                busy={action.busy}
                aria-label={t('guildSettings.webhooks.deleteNamed', { name: label(webhook) })}
                onClick={() =>
                  void action.run(async () => {
                    await admin.deleteWebhook(webhook.id);
                    if (created?.id === webhook.id) setCreated(null);
                    setDeleted(label(webhook));
                    await reload();
                  })
                }
              >
                {t('guildSettings.webhooks.delete')}
              </Button>
            </li>
          ))}
        </ul>
      )}
      {deleted && <Notice tone="success">{t('guildSettings.webhooks.deleted', { name: deleted })}</Notice>}
      {created?.url && (
        <div>
          <Notice tone="success">{t('guildSettings.webhooks.created', { name: label(created) })}</Notice>
          <SecretReveal label={t('guildSettings.webhooks.url')} value={created.url} />
        </div>
      )}
      {textChannels.length > 0 && (
        <form onSubmit={create}>
          <Field
            label={t('guildSettings.webhooks.name')}
            value={name}
            maxLength={80}
            required
            onChange={(event) => setName(event.target.value)}
          />
          <div className="field">
            <label htmlFor={channelId}>{t('guildSettings.webhooks.channel')}</label>
            <select id={channelId} value={channel} onChange={(event) => setChannel(event.target.value)}>
              {textChannels.map((option) => (
                <option key={option.id} value={option.id}>
                  #{option.name}
                </option>
              ))}
            </select>
          </div>
          <Button type="submit" busy={action.busy} disabled={!name.trim() || !channel}>
            {t('guildSettings.webhooks.create')}
          </Button>
        </form>
      )}
    </div>
  );
}
