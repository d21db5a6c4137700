import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { GuildAuditEntry, GuildAuditLog } from '../../../api/guild-admin.ts';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice } from '../../../components/ErrorNotice.tsx';
import { formatDate, snowflakeDate } from '../../../i18n/format.ts';
import { useChat } from '../context.ts';
import { useGuildAdmin, useRun } from './shared.ts';

/** Action types of docs/chat.md *Guild audit log* (Discord's numbers). */
const ACTIONS: Record<number, string> = {
  1: 'GUILD_UPDATE',
  10: 'CHANNEL_CREATE',
  11: 'CHANNEL_UPDATE',
  12: 'CHANNEL_DELETE',
  13: 'CHANNEL_OVERWRITE_CREATE',
  14: 'CHANNEL_OVERWRITE_UPDATE',
  15: 'CHANNEL_OVERWRITE_DELETE',
  20: 'MEMBER_KICK',
  22: 'MEMBER_BAN_ADD',
  23: 'MEMBER_BAN_REMOVE',
  24: 'MEMBER_UPDATE',
  25: 'MEMBER_ROLE_UPDATE',
  28: 'BOT_ADD',
  30: 'ROLE_CREATE',
  31: 'ROLE_UPDATE',
  32: 'ROLE_DELETE',
  40: 'INVITE_CREATE',
  42: 'INVITE_DELETE',
  50: 'WEBHOOK_CREATE',
  51: 'WEBHOOK_UPDATE',
  52: 'WEBHOOK_DELETE',
  60: 'EMOJI_CREATE',
  61: 'EMOJI_UPDATE',
  62: 'EMOJI_DELETE',
  72: 'MESSAGE_DELETE',
  73: 'MESSAGE_BULK_DELETE',
  74: 'MESSAGE_PIN',
  75: 'MESSAGE_UNPIN',
};

/** The guild audit log, read only, newest first, filtered by action and by who acted. */
export function AuditLog({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const store = useChat();
  const admin = useGuildAdmin();
  const [action, setAction] = useState('');
  const [user, setUser] = useState('');
  const [entries, setEntries] = useState<GuildAuditEntry[] | null>(null);
  const [users, setUsers] = useState<Map<string, string>>(new Map());
  const [more, setMore] = useState(false);
  const load = useRun();
  const ids = { action: useId(), user: useId() };
  const state = store.guilds.get(guildId);

  const fetchPage = async (before?: string) => {
    const page: GuildAuditLog = await admin.auditLog(guildId, {
      action_type: action || undefined,
      user_id: user || undefined,
      before,
    });
    const names = new Map(before ? users : []);
    for (const u of page.users) names.set(u.id, u.global_name ?? u.username);
    setUsers(names);
    setEntries(before ? [...(entries ?? []), ...page.audit_log_entries] : page.audit_log_entries);
    setMore(page.audit_log_entries.length === 50);
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: refetched when a filter changes
  useEffect(() => {
    void store.loadMembers(guildId);
    void load.run(() => fetchPage());
  }, [guildId, action, user]);

  const who = (id: string | null) => (id ? (users.get(id) ?? store.displayName(id, guildId)) : '');
  const target = (entry: GuildAuditEntry) => {
    if (!entry.target_id) {
      // An invite's entry has no target id: its code (in the changes) says which one.
      const code = entry.changes?.find((c) => c.key === 'code');
      const value = code?.new_value ?? code?.old_value;
      return typeof value === 'string' ? value : '';
    }
    const channel = store.channels.get(entry.target_id);
    if (channel) return `#${channel.name}`;
    const role = state?.roles.get(entry.target_id);
    if (role) return role.name;
    return users.get(entry.target_id) ?? entry.target_id;
  };
  const members = state ? [...state.members.values()].filter((m) => m.user) : [];
  return (
    <div>
      <div className="inline-form">
        <div className="field">
          <label htmlFor={ids.action}>{t('guildSettings.auditAction')}</label>
          <select id={ids.action} value={action} onChange={(e) => setAction(e.target.value)}>
            <option value="">{t('guildSettings.auditAllActions')}</option>
            {Object.entries(ACTIONS).map(([number, name]) => (
              <option key={number} value={number}>
                {t(`guildSettings.audit.${name}`)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.user}>{t('guildSettings.auditUser')}</label>
          <select id={ids.user} value={user} onChange={(e) => setUser(e.target.value)}>
            <option value="">{t('guildSettings.auditAnyone')}</option>
            {members.map((m) => (
              <option key={m.user?.id} value={m.user?.id}>
                {store.displayName(m.user?.id ?? '', guildId)}
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorNotice error={load.error} />
      {entries && entries.length === 0 && <p>{t('guildSettings.auditEmpty')}</p>}
      {entries && entries.length > 0 && (
        <table className="settings-table">
          <caption className="visually-hidden">{t('guildSettings.auditLog')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('guildSettings.auditWhen')}</th>
              <th scope="col">{t('guildSettings.auditWho')}</th>
              <th scope="col">{t('guildSettings.auditWhat')}</th>
              <th scope="col">{t('guildSettings.auditTarget')}</th>
              <th scope="col">{t('guildSettings.reason')}</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => {
              const name = ACTIONS[entry.action_type];
              return (
                <tr key={entry.id}>
                  <td>{formatDate(snowflakeDate(entry.id), 'dateTime')}</td>
                  <td>{who(entry.user_id)}</td>
                  <td>{name ? t(`guildSettings.audit.${name}`) : String(entry.action_type)}</td>
                  <td>{target(entry)}</td>
                  <td>{entry.reason ?? ''}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {more && entries && (
        <Button variant="secondary" busy={load.busy} onClick={() => void load.run(() => fetchPage(entries.at(-1)?.id))}>
          {t('guildSettings.auditOlder')}
        </Button>
      )}
    </div>
  );
}
