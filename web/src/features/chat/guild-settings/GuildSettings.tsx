import { type ReactNode, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApp } from '../../../app-context.tsx';
import { channelPath, useChat } from '../context.ts';
import { titleCount } from '../notifications.tsx';
import { AuditLog } from './AuditLog.tsx';
import { Bots } from './Bots.tsx';
import { Channels } from './Channels.tsx';
import { Emojis } from './Emojis.tsx';
import { Bans, Invites, Members } from './Moderation.tsx';
import { Overview } from './Overview.tsx';
import { Profile } from './Profile.tsx';
import { Roles } from './Roles.tsx';
import { Webhooks } from './Webhooks.tsx';
import './guild-settings.css';
import { allowedSections, type SectionId } from './sections.ts';

/** Server settings at /channels/{guild_id}/settings: one section at a time, chosen from a list. */
export default function GuildSettings({ guildId, onOpenNav }: { guildId: string; onOpenNav: () => void }) {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const state = store.guilds.get(guildId);
  const allowed = allowedSections(store.permissions(undefined, guildId));
  const [section, setSection] = useState<SectionId | null>(null);
  const current = section && allowed.includes(section) ? section : (allowed[0] ?? null);
  const name = state?.guild.name ?? '';
  const title = t('guildSettings.title', { name });
  // The unread count leads the title here too, as on every chat page: a mention does not wait for the settings
  // to close.
  const unread = titleCount(store);
  useEffect(() => {
    document.title = `${unread ? `(${unread}) ` : ''}${title} · ${t('app.name')}`;
  }, [title, unread, t]);

  const close = () => {
    const first = store.guildChannels(guildId).find((c) => c.type === 0 && store.canView(c));
    navigate(first ? channelPath(first) : `/channels/${guildId}`);
  };
  const bodies: Record<SectionId, () => ReactNode> = {
    overview: () => <Overview guildId={guildId} />,
    roles: () => <Roles guildId={guildId} />,
    channels: () => <Channels guildId={guildId} />,
    emojis: () => <Emojis guildId={guildId} />,
    invites: () => <Invites guildId={guildId} />,
    webhooks: () => <Webhooks guildId={guildId} />,
    bots: () => <Bots guildId={guildId} />,
    members: () => <Members guildId={guildId} />,
    bans: () => <Bans guildId={guildId} />,
    audit: () => <AuditLog guildId={guildId} />,
    profile: () => <Profile guildId={guildId} />,
  };
  return (
    <div className="guild-settings">
      <div className="guild-settings-head">
        <button type="button" className="ghost nav-toggle" onClick={onOpenNav} aria-label={t('chat.openNavigation')}>
          ☰
        </button>
        <h1>{title}</h1>
        <button type="button" className="secondary" onClick={close}>
          {t('guildSettings.close')}
        </button>
      </div>
      {allowed.length === 0 ? (
        <p>{t('guildSettings.nothingAllowed')}</p>
      ) : (
        <div className="guild-settings-body">
          <nav aria-label={t('guildSettings.sections')}>
            <ul className="settings-nav">
              {allowed.map((id) => (
                <li key={id}>
                  <button
                    type="button"
                    className="ghost"
                    aria-current={id === current ? 'page' : undefined}
                    onClick={() => setSection(id)}
                  >
                    {t(`guildSettings.section.${id}`)}
                  </button>
                </li>
              ))}
            </ul>
          </nav>
          {current && (
            <section className="guild-settings-section" aria-labelledby={`gs-${current}`}>
              <h2 id={`gs-${current}`}>{t(`guildSettings.section.${current}`)}</h2>
              {bodies[current]()}
            </section>
          )}
        </div>
      )}
    </div>
  );
}
