import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { FriendSourceFlags, PrivacySettings, UserGuild } from '../../api/types.ts';
import { useApp } from '../../app-context.tsx';
import { ErrorNotice, Notice } from '../../components/ErrorNotice.tsx';

/**
 * Who may reach the account (docs/accounts.md#privacy): direct messages from members of servers joined from now
 * on (`default_guilds_restricted`) and per server (`restricted_guilds`), and who may send a friend request
 * (`friend_source_flags`). Each change is saved at once.
 */
export function PrivacySection() {
  const { t } = useTranslation();
  const { api } = useApp();
  const [settings, setSettings] = useState<PrivacySettings | null>(null);
  const [guilds, setGuilds] = useState<UserGuild[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    let live = true;
    Promise.all([api.users.settings(), api.users.guilds()])
      .then(([read, joined]) => {
        if (!live) return;
        setSettings(read);
        setGuilds(joined);
      })
      .catch((caught: unknown) => live && setError(caught));
    return () => {
      live = false;
    };
  }, [api]);

  // Shown at once (a checkbox follows the click). The changes go to the server one after another, in the
  // order made, so a quick second change never lands before the first; "saved" shows once none is pending.
  // A refusal puts back what the server holds.
  const queue = useRef<Promise<void>>(Promise.resolve());
  const pending = useRef(0);
  const save = (changes: Partial<PrivacySettings>) => {
    setError(null);
    setSaved(false);
    setSettings((current) => (current ? { ...current, ...changes } : current));
    pending.current += 1;
    queue.current = queue.current.then(async () => {
      try {
        await api.users.updateSettings(changes);
        pending.current -= 1;
        if (pending.current === 0) setSaved(true);
      } catch (caught) {
        pending.current -= 1;
        setError(caught);
        setSettings(await api.users.settings().catch(() => null));
      }
    });
  };

  const flags = settings?.friend_source_flags ?? {};
  const everyone = flags.all === true;
  const setFlag = (name: keyof FriendSourceFlags, on: boolean) => {
    // "Everyone" switched off keeps the two narrower sources on, as the platform's clients do.
    const next: FriendSourceFlags =
      name === 'all'
        ? on
          ? { all: true }
          : { mutual_friends: true, mutual_guilds: true }
        : { mutual_friends: flags.mutual_friends === true, mutual_guilds: flags.mutual_guilds === true, [name]: on };
    save({ friend_source_flags: next });
  };
  const restricted = new Set(settings?.restricted_guilds ?? []);
  const setGuildAllowed = (guildId: string, allowed: boolean) => {
    const next = new Set(restricted);
    if (allowed) next.delete(guildId);
    else next.add(guildId);
    save({ restricted_guilds: [...next] });
  };

  return (
    <section aria-labelledby="privacy-heading">
      <h2 id="privacy-heading">{t('settings.privacyTitle')}</h2>
      {settings && (
        <>
          <fieldset>
            <legend>{t('settings.privacyDmLegend')}</legend>
            <label className="check">
              <input
                type="checkbox"
                aria-describedby="privacy-dm-hint"
                checked={!settings.default_guilds_restricted}
                onChange={(event) => save({ default_guilds_restricted: !event.target.checked })}
              />{' '}
              {t('settings.privacyDmNewServers')}
            </label>
            <p id="privacy-dm-hint" className="hint">
              {t('settings.privacyDmNewServersHint')}
            </p>
            {guilds.map((guild) => (
              <label key={guild.id} className="check">
                <input
                  type="checkbox"
                  checked={!restricted.has(guild.id)}
                  onChange={(event) => setGuildAllowed(guild.id, event.target.checked)}
                />{' '}
                {t('settings.privacyDmServer', { server: guild.name })}
              </label>
            ))}
          </fieldset>
          <fieldset>
            <legend>{t('settings.privacyFriendsLegend')}</legend>
            <label className="check">
              <input type="checkbox" checked={everyone} onChange={(event) => setFlag('all', event.target.checked)} />{' '}
              {t('settings.privacyFriendsEveryone')}
            </label>
            <label className="check">
              <input
                type="checkbox"
                disabled={everyone}
                checked={everyone || flags.mutual_friends === true}
                onChange={(event) => setFlag('mutual_friends', event.target.checked)}
              />{' '}
              {t('settings.privacyFriendsOfFriends')}
            </label>
            <label className="check">
              <input
                type="checkbox"
                disabled={everyone}
                checked={everyone || flags.mutual_guilds === true}
                onChange={(event) => setFlag('mutual_guilds', event.target.checked)}
              />{' '}
              {t('settings.privacyFriendsServerMembers')}
            </label>
          </fieldset>
        </>
      )}
      <ErrorNotice error={error} />
      {saved && <Notice tone="success">{t('settings.privacySaved')}</Notice>}
    </section>
  );
}
