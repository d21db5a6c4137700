import { type FormEvent, useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Ban, InviteMetadata } from '../../../api/guild-admin.ts';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice } from '../../../components/ErrorNotice.tsx';
import { Field } from '../../../components/Field.tsx';
import { formatDate } from '../../../i18n/format.ts';
import { useChat } from '../context.ts';
import { sortedRoles } from './Roles.tsx';
import { bit, useGuildAdmin, useRun } from './shared.ts';

const TIMEOUTS = [1, 5, 10, 60, 1440, 10080];

/** The guild's live invites with uses and expiry; revoke. */
export function Invites({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const admin = useGuildAdmin();
  const [invites, setInvites] = useState<InviteMetadata[] | null>(null);
  const action = useRun();
  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per guild
  useEffect(() => {
    void action.run(async () => setInvites(await admin.invites(guildId)));
  }, [guildId]);
  return (
    <div>
      <ErrorNotice error={action.error} />
      {invites && invites.length === 0 && <p>{t('guildSettings.noInvites')}</p>}
      {invites && invites.length > 0 && (
        <table className="settings-table">
          <caption className="visually-hidden">{t('guildSettings.inviteList')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('guildSettings.code')}</th>
              <th scope="col">{t('guildSettings.channel')}</th>
              <th scope="col">{t('guildSettings.inviter')}</th>
              <th scope="col">{t('guildSettings.uses')}</th>
              <th scope="col">{t('guildSettings.expires')}</th>
              <th scope="col">
                <span className="visually-hidden">{t('guildSettings.actions')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {invites.map((invite) => (
              <tr key={invite.code}>
                <td>
                  <code>{invite.code}</code>
                </td>
                <td>{invite.channel ? `#${invite.channel.name}` : ''}</td>
                <td>{invite.inviter?.global_name ?? invite.inviter?.username ?? ''}</td>
                <td>{invite.max_uses ? `${invite.uses} / ${invite.max_uses}` : String(invite.uses)}</td>
                <td>{invite.expires_at ? formatDate(invite.expires_at, 'dateTime') : t('guildSettings.never')}</td>
                <td>
                  <Button
                    variant="danger"
                    busy={action.busy}
                    aria-label={t('guildSettings.revokeInvite', { code: invite.code })}
                    onClick={() =>
                      void action.run(async () => {
                        await admin.revokeInvite(invite.code);
                        setInvites(await admin.invites(guildId));
                      })
                    }
                  >
                    {t('guildSettings.revoke')}
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** The guild's bans with their reasons; unban. */
export function Bans({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const admin = useGuildAdmin();
  const [bans, setBans] = useState<Ban[] | null>(null);
  const action = useRun();
  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per guild
  useEffect(() => {
    void action.run(async () => setBans(await admin.bans(guildId)));
  }, [guildId]);
  return (
    <div>
      <ErrorNotice error={action.error} />
      {bans && bans.length === 0 && <p>{t('guildSettings.noBans')}</p>}
      {bans && bans.length > 0 && (
        <ul className="settings-list" aria-label={t('guildSettings.banList')}>
          {bans.map((ban) => (
            <li key={ban.user.id}>
              <span className="grow">
                {ban.user.global_name ?? ban.user.username}
                {ban.reason ? ` — ${ban.reason}` : ''}
              </span>
              <Button
                variant="secondary"
                busy={action.busy}
                aria-label={t('guildSettings.unbanNamed', { name: ban.user.username })}
                onClick={() =>
                  void action.run(async () => {
                    await admin.unban(guildId, ban.user.id);
                    setBans(await admin.bans(guildId));
                  })
                }
              >
                {t('guildSettings.unban')}
              </Button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Members: roles given and taken, kick or ban with a reason. */
export function Members({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const store = useChat();
  const [selected, setSelected] = useState<string | null>(null);
  const state = store.guilds.get(guildId);
  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per guild
  useEffect(() => {
    void store.loadMembers(guildId);
  }, [guildId]);
  if (!state) return null;
  const members = [...state.members.values()].filter((m) => m.user);
  return (
    <div>
      <ul className="settings-list" aria-label={t('guildSettings.memberList')}>
        {members.map((member) => {
          const id = member.user?.id ?? '';
          const name = store.displayName(id, guildId);
          return (
            <li key={id} className={id === selected ? 'selected' : undefined}>
              <span className="grow">{name}</span>
              <button
                type="button"
                className="ghost small"
                onClick={() => setSelected(id)}
                aria-label={t('guildSettings.manageMember', { name })}
              >
                {t('guildSettings.manage')}
              </button>
            </li>
          );
        })}
      </ul>
      {selected && <MemberEditor key={selected} guildId={guildId} userId={selected} onGone={() => setSelected(null)} />}
    </div>
  );
}

function MemberEditor({ guildId, userId, onGone }: { guildId: string; userId: string; onGone: () => void }) {
  const { t } = useTranslation();
  const store = useChat();
  const admin = useGuildAdmin();
  const [reason, setReason] = useState('');
  const action = useRun();
  const rolesLegend = useId();
  const timeoutId = useId();
  const [timeoutMinutes, setTimeoutMinutes] = useState(60);
  const state = store.guilds.get(guildId);
  const member = state?.members.get(userId);
  const [nick, setNick] = useState(member?.nick ?? '');
  const [pending, setPending] = useState<Record<string, boolean>>({});
  const roleKey = member?.roles.join(',');
  // A member update (ours confirmed, or someone else's change) replaces what was shown optimistically.
  // biome-ignore lint/correctness/useExhaustiveDependencies: roleKey stands for member.roles
  useEffect(() => setPending({}), [roleKey]);
  if (!state || !member) return null;
  const perms = store.permissions(undefined, guildId);
  const name = store.displayName(userId, guildId);
  const isOwner = state.guild.owner_id === userId;
  const canRoles = (perms & bit('MANAGE_ROLES')) !== 0n;
  const canNick = (perms & bit('MANAGE_NICKNAMES')) !== 0n;
  const canTimeout = (perms & bit('MODERATE_MEMBERS')) !== 0n && !isOwner && userId !== store.me;
  const timedOutUntil =
    member.communication_disabled_until && Date.parse(member.communication_disabled_until) > Date.now()
      ? member.communication_disabled_until
      : null;
  const canKick = (perms & bit('KICK_MEMBERS')) !== 0n && !isOwner && userId !== store.me;
  const canBan = (perms & bit('BAN_MEMBERS')) !== 0n && !isOwner && userId !== store.me;
  const moderate = async (event: FormEvent, kind: 'kick' | 'ban') => {
    event.preventDefault();
    const why = reason.trim() || undefined;
    if (await action.run(() => (kind === 'kick' ? admin.kick(guildId, userId, why) : admin.ban(guildId, userId, why))))
      onGone();
  };
  return (
    <section className="role-editor" aria-label={t('guildSettings.memberEditor', { name })}>
      <h3>{t('guildSettings.memberEditor', { name })}</h3>
      {canRoles && (
        <fieldset aria-describedby={rolesLegend}>
          <legend id={rolesLegend}>{t('guildSettings.memberRoles')}</legend>
          {/* An empty box said nothing: a new server has no role to give yet. */}
          {sortedRoles(state.roles.values(), guildId).length === 0 && (
            <p className="hint">{t('guildSettings.noRolesYet')}</p>
          )}
          {sortedRoles(state.roles.values(), guildId).map((role) => (
            <label key={role.id} className="check">
              <input
                type="checkbox"
                checked={pending[role.id] ?? member.roles.includes(role.id)}
                disabled={action.busy}
                onChange={async (e) => {
                  const on = e.target.checked;
                  // Shown at once; the member update from the gateway then confirms it (or the error undoes it).
                  setPending({ ...pending, [role.id]: on });
                  if (!(await action.run(() => admin.setMemberRole(guildId, userId, role.id, on))))
                    setPending((now) => {
                      const { [role.id]: _, ...rest } = now;
                      return rest;
                    });
                }}
              />
              {role.name}
            </label>
          ))}
        </fieldset>
      )}
      {canNick && (
        <form
          className="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            void action.run(() => admin.editMember(guildId, userId, { nick: nick.trim() || null }));
          }}
        >
          <Field
            label={t('guildSettings.nickname')}
            value={nick}
            onChange={(e) => setNick(e.target.value)}
            maxLength={32}
          />
          <Button type="submit" variant="secondary" busy={action.busy}>
            {t('guildSettings.saveNickname')}
          </Button>
        </form>
      )}
      {canTimeout && (
        <div className="inline-form">
          <div className="field">
            <label htmlFor={timeoutId}>{t('guildSettings.timeoutFor')}</label>
            <select id={timeoutId} value={timeoutMinutes} onChange={(e) => setTimeoutMinutes(Number(e.target.value))}>
              {TIMEOUTS.map((minutes) => (
                <option key={minutes} value={minutes}>
                  {minutes < 60
                    ? t('guildSettings.minutes', { count: minutes })
                    : minutes < 1440
                      ? t('guildSettings.hours', { count: minutes / 60 })
                      : t('guildSettings.days', { count: minutes / 1440 })}
                </option>
              ))}
            </select>
          </div>
          <Button
            variant="secondary"
            busy={action.busy}
            onClick={() =>
              void action.run(() =>
                admin.editMember(
                  guildId,
                  userId,
                  { communication_disabled_until: new Date(Date.now() + timeoutMinutes * 60_000).toISOString() },
                  reason.trim() || undefined,
                ),
              )
            }
          >
            {t('guildSettings.timeOut', { name })}
          </Button>
          {timedOutUntil && (
            <>
              <p>{t('guildSettings.timedOutUntil', { date: formatDate(timedOutUntil, 'dateTime') })}</p>
              <Button
                variant="secondary"
                busy={action.busy}
                onClick={() =>
                  void action.run(() => admin.editMember(guildId, userId, { communication_disabled_until: null }))
                }
              >
                {t('guildSettings.endTimeout')}
              </Button>
            </>
          )}
        </div>
      )}
      {(canKick || canBan) && (
        <form onSubmit={(e) => moderate(e, 'kick')}>
          <Field
            label={t('guildSettings.reason')}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            maxLength={512}
          />
          <div className="form-actions">
            {canKick && (
              <Button type="submit" variant="danger" busy={action.busy}>
                {t('guildSettings.kick', { name })}
              </Button>
            )}
            {canBan && (
              <Button variant="danger" busy={action.busy} onClick={(e) => void moderate(e, 'ban')}>
                {t('guildSettings.ban', { name })}
              </Button>
            )}
          </div>
        </form>
      )}
      <ErrorNotice error={action.error} />
    </section>
  );
}
