import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Member, Role } from '../../api/chat-types.ts';
import { useChat } from './context.ts';
import { channelPermissions, P } from './permissions.ts';
import { UserPopout } from './UserPopout.tsx';

/** Members who can see the channel, grouped under their highest hoisted role, then everyone else. */
export function MemberList({ guildId, channel }: { guildId: string; channel: Channel }) {
  const { t } = useTranslation();
  const store = useChat();
  const [open, setOpen] = useState<string | null>(null);
  const state = store.guilds.get(guildId);
  useEffect(() => {
    void store.loadMembers(guildId);
  }, [store, guildId]);
  if (!state) return null;
  const hoisted = [...state.roles.values()]
    .filter((r) => r.hoist && r.id !== guildId)
    .sort((a, b) => b.position - a.position);
  const groups = new Map<string, { title: string; members: Member[] }>();
  for (const role of hoisted) groups.set(role.id, { title: role.name, members: [] });
  const rest: Member[] = [];
  for (const member of state.members.values()) {
    if (!member.user) continue;
    if (!(channelPermissions(state.guild, state.roles, member, member.user.id, channel) & P.VIEW_CHANNEL)) continue;
    const top = hoisted.find((role: Role) => member.roles.includes(role.id));
    if (top) groups.get(top.id)?.members.push(member);
    else rest.push(member);
  }
  // With presence known (someone online), offline members go last under their own heading, as people expect.
  const presenceKnown = store.presences.size > 0;
  const online = (m: Member) => store.presences.has(m.user?.id ?? '');
  let sections: { title: string; members: Member[] }[];
  if (presenceKnown) {
    const offline = [
      ...[...groups.values()].flatMap((g) => g.members.filter((m) => !online(m))),
      ...rest.filter((m) => !online(m)),
    ];
    sections = [
      ...[...groups.values()].map((g) => ({ title: g.title, members: g.members.filter(online) })),
      { title: t('chat.online'), members: rest.filter(online) },
      { title: t('chat.offline'), members: offline },
    ];
  } else {
    sections = [...groups.values(), { title: t('chat.members'), members: rest }];
  }
  sections = sections.filter((g) => g.members.length > 0);
  const byName = (a: Member, b: Member) =>
    store.displayName(a.user?.id ?? '', guildId).localeCompare(store.displayName(b.user?.id ?? '', guildId));
  return (
    <aside className="member-list" aria-label={t('chat.memberList')}>
      {sections.map((section) => (
        <section key={section.title} aria-label={`${section.title} — ${section.members.length}`}>
          <h2 className="member-group">
            {section.title} — {section.members.length}
          </h2>
          <ul>
            {section.members.sort(byName).map((member) => {
              const id = member.user?.id ?? '';
              return (
                <li key={id}>
                  <button
                    type="button"
                    className="member"
                    aria-expanded={open === id}
                    style={{ color: store.roleColor(guildId, id) }}
                    onClick={() => setOpen(open === id ? null : id)}
                  >
                    <span className="avatar" aria-hidden="true">
                      {[...store.displayName(id, guildId)][0]}
                      {presenceKnown && <span className={`status status-${store.presences.get(id) ?? 'offline'}`} />}
                    </span>
                    {store.displayName(id, guildId)}
                    {presenceKnown && (
                      <span className="visually-hidden">
                        , {t(`chat.status.${store.presences.get(id) ?? 'offline'}`)}
                      </span>
                    )}
                    {member.user?.bot && <span className="tag">{t('chat.bot')}</span>}
                  </button>
                  {open === id && <UserPopout userId={id} guildId={guildId} onClose={() => setOpen(null)} />}
                </li>
              );
            })}
          </ul>
        </section>
      ))}
    </aside>
  );
}
