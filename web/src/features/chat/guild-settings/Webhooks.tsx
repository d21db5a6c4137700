import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel } from '../../../api/chat-types.ts';
import type { Webhook } from '../../../api/guild-admin.ts';
import { useApp } from '../../../app-context.tsx';
import { Avatar } from '../../../components/Avatar.tsx';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../../components/ErrorNotice.tsx';
import { Field } from '../../../components/Field.tsx';
import { SecretReveal } from '../../../components/SecretReveal.tsx';
import { type ImageSource, imageUrl } from '../../../lib/media.ts';
import { useChat } from '../context.ts';
import { IMAGE_PREVIEW_SIZE, ImageField } from '../ImageField.tsx';
import { useGuildAdmin, useRun } from './shared.ts';

/** A webhook's avatar, stored as an avatar under the webhook's id. */
function webhookAvatar(webhook: Webhook): ImageSource | null {
  return webhook.avatar ? { kind: 'avatar', userId: webhook.id, hash: webhook.avatar } : null;
}

/**
 * The guild's incoming webhooks: the list (avatar, name, channel, creator), create one for a text channel (its
 * URL shown once, with a copy button: the server keeps only the token's hash), edit one (rename, move to another
 * text channel, set or remove its avatar: PATCH /webhooks/{id}), delete
 * (docs/web.md#chat-featureschat-issue-18, the server settings table).
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
  const [editing, setEditing] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
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
    setSaved(null);
    void action.run(async () => {
      setCreated(await admin.createWebhook(channel, name.trim()));
      setName('');
      await reload();
    });
  };

  return (
    <div>
      <p>
        {t('guildSettings.webhooks.intro')} {t('guildSettings.webhooks.urlOnce')}
      </p>
      <ErrorNotice error={action.error} />
      {webhooks && webhooks.length === 0 && <p>{t('guildSettings.webhooks.none')}</p>}
      {webhooks && webhooks.length > 0 && (
        <ul className="settings-list" aria-label={t('guildSettings.webhooks.list')}>
          {webhooks.map((webhook) => (
            <li key={webhook.id}>
              <Avatar source={webhookAvatar(webhook)} name={label(webhook)} size={24} />{' '}
              <strong>{label(webhook)}</strong>{' '}
              {t('guildSettings.webhooks.postsIn', { channel: channelName(webhook.channel_id) })}
              {webhook.user && ` · ${webhook.user.global_name ?? webhook.user.username}`}{' '}
              <Button
                variant="secondary"
                aria-label={t('guildSettings.webhooks.editNamed', { name: label(webhook) })}
                aria-expanded={editing === webhook.id}
                onClick={() => {
                  setSaved(null);
                  setDeleted(null);
                  setEditing(editing === webhook.id ? null : webhook.id);
                }}
              >
                {t('guildSettings.webhooks.edit')}
              </Button>{' '}
              <Button
                variant="danger"
                busy={action.busy}
                aria-label={t('guildSettings.webhooks.deleteNamed', { name: label(webhook) })}
                onClick={() =>
                  void action.run(async () => {
                    await admin.deleteWebhook(webhook.id);
                    if (created?.id === webhook.id) setCreated(null);
                    if (editing === webhook.id) setEditing(null);
                    setSaved(null);
                    setDeleted(label(webhook));
                    await reload();
                  })
                }
              >
                {t('guildSettings.webhooks.delete')}
              </Button>
              {editing === webhook.id && (
                <WebhookEditor
                  webhook={webhook}
                  label={label(webhook)}
                  channels={textChannels}
                  onCancel={() => setEditing(null)}
                  onSaved={async (updated) => {
                    setEditing(null);
                    setSaved(label(updated));
                    await reload();
                  }}
                />
              )}
            </li>
          ))}
        </ul>
      )}
      {saved && <Notice tone="success">{t('guildSettings.webhooks.saved', { name: saved })}</Notice>}
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

/** One webhook's form: a new name, another text channel, an avatar; only what changed is sent. */
function WebhookEditor({
  webhook,
  label,
  channels,
  onCancel,
  onSaved,
}: {
  webhook: Webhook;
  label: string;
  channels: Channel[];
  onCancel: () => void;
  onSaved: (updated: Webhook) => Promise<void>;
}) {
  const { t } = useTranslation();
  const admin = useGuildAdmin();
  const { discovery } = useApp();
  const channelId = useId();
  const [name, setName] = useState(webhook.name ?? '');
  const [channel, setChannel] = useState(webhook.channel_id);
  // undefined: unchanged; a data URI: the new picture; null: removed.
  const [avatar, setAvatar] = useState<string | null | undefined>(undefined);
  const save = useRun();
  const stored = webhookAvatar(webhook);
  const preview =
    avatar !== undefined ? avatar : stored ? imageUrl(discovery.endpoints.media, stored, IMAGE_PREVIEW_SIZE) : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body: { name?: string; channel_id?: string; avatar?: string | null } = {};
    if (name.trim() !== (webhook.name ?? '')) body.name = name.trim();
    if (channel !== webhook.channel_id) body.channel_id = channel;
    if (avatar !== undefined) body.avatar = avatar;
    void save.run(async () => {
      await onSaved(Object.keys(body).length > 0 ? await admin.editWebhook(webhook.id, body) : webhook);
    });
  };

  return (
    <form className="guild-form" aria-label={t('guildSettings.webhooks.form', { name: label })} onSubmit={submit}>
      <ErrorNotice error={save.error} />
      <Field
        label={t('guildSettings.webhooks.rename')}
        value={name}
        maxLength={80}
        required
        onChange={(event) => setName(event.target.value)}
      />
      <div className="field">
        <label htmlFor={channelId}>{t('guildSettings.webhooks.moveTo')}</label>
        <select id={channelId} value={channel} onChange={(event) => setChannel(event.target.value)}>
          {channels.map((option) => (
            <option key={option.id} value={option.id}>
              #{option.name}
            </option>
          ))}
        </select>
      </div>
      <ImageField
        text={{
          label: t('guildSettings.webhooks.avatar'),
          preview: t('guildSettings.webhooks.avatarPreview'),
          none: t('guildSettings.webhooks.noAvatar'),
          remove: t('guildSettings.webhooks.removeAvatar'),
        }}
        preview={preview}
        onChange={setAvatar}
      />
      <div className="dialog-actions">
        <Button type="button" variant="secondary" onClick={onCancel}>
          {t('common.cancel')}
        </Button>
        <Button type="submit" busy={save.busy} disabled={!name.trim()}>
          {t('guildSettings.webhooks.save')}
        </Button>
      </div>
    </form>
  );
}
