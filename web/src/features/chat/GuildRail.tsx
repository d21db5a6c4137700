import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { Field } from '../../components/Field.tsx';
import { guildIcon } from '../../lib/media.ts';
import { channelPath, useChat } from './context.ts';
import { Dialog } from './Dialog.tsx';
import { isMuted } from './notifications.tsx';

/** The column of guilds: home (DMs), one button per guild with unread and mention badges, create. */
export function GuildRail({ activeGuildId }: { activeGuildId: string | null }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [creating, setCreating] = useState(false);
  const dmMentions = store
    .privateChannels()
    .reduce((sum, channel) => sum + (isMuted(channel.id) ? 0 : (store.mentions.get(channel.id) ?? 0)), 0);
  const go = (to: string) => (event: React.MouseEvent) => {
    event.preventDefault();
    navigate(to);
  };
  return (
    <nav className="rail" aria-label={t('chat.servers')}>
      <ul>
        <li>
          <a
            href="/channels/@me"
            className="rail-item home"
            aria-current={activeGuildId === null ? 'page' : undefined}
            aria-label={dmMentions ? t('chat.homeWithMentions', { count: dmMentions }) : t('chat.home')}
            onClick={go('/channels/@me')}
          >
            <span aria-hidden="true">⌂</span>
            {dmMentions > 0 && (
              <span className="badge" aria-hidden="true">
                {dmMentions}
              </span>
            )}
          </a>
        </li>
        {store.orderedGuilds().map(({ guild }) => {
          const { unread, mentions } = isMuted(guild.id) ? { unread: false, mentions: 0 } : store.guildUnread(guild.id);
          const label = [
            guild.name,
            mentions ? t('chat.mentionCount', { count: mentions }) : unread ? t('chat.unread') : '',
          ]
            .filter(Boolean)
            .join(', ');
          const last = store.guildChannels(guild.id).find((c) => c.type === 0);
          const to = last ? channelPath(last) : `/channels/${guild.id}`;
          return (
            <li key={guild.id} className={unread ? 'has-unread' : undefined}>
              <a
                href={to}
                className="rail-item"
                aria-label={label}
                aria-current={activeGuildId === guild.id ? 'page' : undefined}
                title={guild.name}
                onClick={go(to)}
              >
                {/* The picture stands for the guild here: it carries the guild's name. */}
                <Avatar source={guildIcon(guild)} name={guild.name} size={48} labelled className="rail-picture" />
                {mentions > 0 && (
                  <span className="badge" aria-hidden="true">
                    {mentions}
                  </span>
                )}
              </a>
            </li>
          );
        })}
        <li>
          <button
            type="button"
            className="rail-item add"
            aria-label={t('chat.createServer')}
            title={t('chat.createServer')}
            onClick={() => setCreating(true)}
          >
            <span aria-hidden="true">+</span>
          </button>
        </li>
      </ul>
      {creating && <CreateGuildDialog onClose={() => setCreating(false)} />}
    </nav>
  );
}

function CreateGuildDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const guild = await store.api.createGuild(name.trim());
      onClose();
      navigate(guild.system_channel_id ? `/channels/${guild.id}/${guild.system_channel_id}` : `/channels/${guild.id}`);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  };
  return (
    <Dialog title={t('chat.createServer')} onClose={onClose}>
      <form onSubmit={submit}>
        <Field
          label={t('chat.serverName')}
          data-autofocus
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
        />
        <ErrorNotice error={error} />
        <Button type="submit" busy={busy} disabled={!name.trim()}>
          {t('chat.create')}
        </Button>
      </form>
    </Dialog>
  );
}
