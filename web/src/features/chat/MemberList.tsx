import type { TFunction } from 'i18next';
import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Member, Role } from '../../api/chat-types.ts';
import { Avatar } from '../../components/Avatar.tsx';
import { useChat } from './context.ts';
import { channelPermissions, P } from './permissions.ts';
import type { ChatStore, GuildState } from './store.ts';
import { UserPopout } from './UserPopout.tsx';

/** Rows rendered at first, and added each time the end of the list comes into view (or its button is used). */
const ROWS = 100;
const MORE_ROWS = 200;

interface Section {
  title: string;
  members: Member[];
}

/** Members who can see the channel, grouped under their highest hoisted role, then everyone else, by name. */
function sectionsOf(store: ChatStore, state: GuildState, guildId: string, channel: Channel, t: TFunction): Section[] {
  const hoisted = [...state.roles.values()]
    .filter((r) => r.hoist && r.id !== guildId)
    .sort((a, b) => b.position - a.position);
  const groups = new Map<string, Section>();
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
  let sections: Section[];
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
  // Names are read once per member, not once per comparison.
  const names = new Map<Member, string>();
  const nameOf = (m: Member) => {
    let name = names.get(m);
    if (name === undefined) {
      name = store.displayName(m.user?.id ?? '', guildId);
      names.set(m, name);
    }
    return name;
  };
  const collator = new Intl.Collator();
  return sections
    .filter((g) => g.members.length > 0)
    .map((g) => ({ title: g.title, members: g.members.sort((a, b) => collator.compare(nameOf(a), nameOf(b))) }));
}

/**
 * The member list. The grouping is computed once per change of guild data (not per message), and a large
 * guild's rows are rendered a page at a time as the list is scrolled (docs/web.md#member-list).
 */
export function MemberList({ guildId, channel }: { guildId: string; channel: Channel }) {
  const { t } = useTranslation();
  const store = useChat();
  const [open, setOpen] = useState<string | null>(null);
  const [shown, setShown] = useState(ROWS);
  // The "show more" button, observed while it exists: reaching it adds a page.
  const [more, setMore] = useState<HTMLButtonElement | null>(null);
  const state = store.guilds.get(guildId);
  useEffect(() => {
    void store.loadMembers(guildId);
  }, [store, guildId]);
  // A new guild or channel starts from the first page.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the ids are the trigger, not read inside.
  useEffect(() => setShown(ROWS), [guildId, channel.id]);
  const metaVersion = store.metaVersion;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the store's maps change in place; metaVersion moves with them.
  const sections = useMemo(
    () => (state ? sectionsOf(store, state, guildId, channel, t) : []),
    [store, state, guildId, channel, t, metaVersion],
  );
  const total = sections.reduce((n, section) => n + section.members.length, 0);
  const left = total - shown;
  useEffect(() => {
    const button = more;
    if (!button || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) setShown((n) => n + MORE_ROWS);
    });
    observer.observe(button);
    return () => observer.disconnect();
  }, [more]);
  if (!state) return null;
  const presenceKnown = store.presences.size > 0;
  let budget = shown;
  return (
    <aside className="member-list" aria-label={t('chat.memberList')}>
      {sections.map((section) => {
        const rows = section.members.slice(0, Math.max(0, budget));
        budget -= rows.length;
        if (rows.length === 0) return null;
        return (
          <section key={section.title} aria-label={`${section.title} — ${section.members.length}`}>
            <h2 className="member-group">
              {section.title} — {section.members.length}
            </h2>
            <ul>
              {rows.map((member) => {
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
                      <Avatar source={store.avatarOf(id, guildId)} name={store.displayName(id, guildId)} size={32}>
                        {presenceKnown && <span className={`status status-${store.presences.get(id) ?? 'offline'}`} />}
                      </Avatar>
                      {store.displayName(id, guildId)}
                      {presenceKnown && (
                        <span className="visually-hidden">
                          , {t(`chat.status.${store.presences.get(id) ?? 'offline'}`)}
                        </span>
                      )}
                      {member.user?.bot && <span className="tag">{t('chat.bot')}</span>}
                    </button>
                    {open === id && (
                      <UserPopout userId={id} guildId={guildId} channel={channel} onClose={() => setOpen(null)} />
                    )}
                  </li>
                );
              })}
            </ul>
          </section>
        );
      })}
      {left > 0 && (
        <button ref={setMore} type="button" className="link-button" onClick={() => setShown((n) => n + MORE_ROWS)}>
          {t('chat.showMoreMembers', { count: left })}
        </button>
      )}
    </aside>
  );
}
