import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ChannelType } from '../../../api/chat-types.ts';
import type { GuildSettings } from '../../../api/guild-admin.ts';
import { useApp } from '../../../app-context.tsx';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice, Notice } from '../../../components/ErrorNotice.tsx';
import { Field } from '../../../components/Field.tsx';
import { guildIcon, imageUrl } from '../../../lib/media.ts';
import { useChat } from '../context.ts';
import { IMAGE_PREVIEW_SIZE, ImageField } from '../ImageField.tsx';
import { useGuildAdmin, useRun } from './shared.ts';

const AFK_TIMEOUTS = [60, 300, 900, 1800, 3600];

/** Name, icon, system channel, AFK channel and timeout, default notifications. */
export function Overview({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const store = useChat();
  const admin = useGuildAdmin();
  const [loaded, setLoaded] = useState<GuildSettings | null>(null);
  const [name, setName] = useState('');
  const [icon, setIcon] = useState<string | null | undefined>(undefined);
  const [systemChannel, setSystemChannel] = useState('');
  const [afkChannel, setAfkChannel] = useState('');
  const [afkTimeout, setAfkTimeout] = useState(300);
  const [notifications, setNotifications] = useState(0);
  const [saved, setSaved] = useState(false);
  const load = useRun();
  const save = useRun();
  const ids = { system: useId(), afk: useId(), timeout: useId(), notify: useId() };

  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per guild
  useEffect(() => {
    void load.run(async () => {
      const guild = await admin.guild(guildId);
      setLoaded(guild);
      setName(guild.name);
      setSystemChannel(guild.system_channel_id ?? '');
      setAfkChannel(guild.afk_channel_id ?? '');
      setAfkTimeout(guild.afk_timeout ?? 300);
      setNotifications(guild.default_message_notifications ?? 0);
    });
  }, [guildId, admin]);

  const channels = store.guildChannels(guildId);
  const text = channels.filter((c) => c.type === ChannelType.Text);
  const voice = channels.filter((c) => c.type === ChannelType.Voice);
  const current = store.guilds.get(guildId)?.guild;
  const { discovery } = useApp();
  const stored = current ? guildIcon(current) : null;
  const iconUrl =
    icon !== undefined ? icon : stored ? imageUrl(discovery.endpoints.media, stored, IMAGE_PREVIEW_SIZE) : null;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const body: Record<string, unknown> = {
      name: name.trim(),
      system_channel_id: systemChannel || null,
      afk_channel_id: afkChannel || null,
      afk_timeout: afkTimeout,
      default_message_notifications: notifications,
    };
    if (icon !== undefined) body.icon = icon;
    const ok = await save.run(async () => {
      setLoaded(await admin.editGuild(guildId, body));
      setIcon(undefined);
    });
    setSaved(ok);
  };

  if (!loaded) return <ErrorNotice error={load.error} />;
  return (
    <form className="guild-form" onSubmit={submit}>
      <Field
        label={t('guildSettings.serverName')}
        value={name}
        onChange={(e) => setName(e.target.value)}
        required
        maxLength={100}
      />
      <ImageField
        text={{
          label: t('guildSettings.icon'),
          preview: t('guildSettings.iconPreview'),
          none: t('guildSettings.noIcon'),
          remove: t('guildSettings.removeIcon'),
        }}
        preview={iconUrl}
        onChange={setIcon}
      />
      <div className="field">
        <label htmlFor={ids.system}>{t('guildSettings.systemChannel')}</label>
        <select id={ids.system} value={systemChannel} onChange={(e) => setSystemChannel(e.target.value)}>
          <option value="">{t('guildSettings.none')}</option>
          {text.map((c) => (
            <option key={c.id} value={c.id}>
              #{c.name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={ids.afk}>{t('guildSettings.afkChannel')}</label>
        <select id={ids.afk} value={afkChannel} onChange={(e) => setAfkChannel(e.target.value)}>
          <option value="">{t('guildSettings.none')}</option>
          {voice.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={ids.timeout}>{t('guildSettings.afkTimeout')}</label>
        <select id={ids.timeout} value={afkTimeout} onChange={(e) => setAfkTimeout(Number(e.target.value))}>
          {AFK_TIMEOUTS.map((seconds) => (
            <option key={seconds} value={seconds}>
              {t('guildSettings.minutes', { count: seconds / 60 })}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={ids.notify}>{t('guildSettings.defaultNotifications')}</label>
        <select id={ids.notify} value={notifications} onChange={(e) => setNotifications(Number(e.target.value))}>
          <option value={0}>{t('guildSettings.allMessages')}</option>
          <option value={1}>{t('guildSettings.onlyMentions')}</option>
        </select>
      </div>
      <ErrorNotice error={save.error} />
      {saved && <Notice tone="success">{t('guildSettings.saved')}</Notice>}
      <Button type="submit" busy={save.busy}>
        {t('guildSettings.save')}
      </Button>
    </form>
  );
}
