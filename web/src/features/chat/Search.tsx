import {
  createContext,
  type KeyboardEvent,
  type RefObject,
  useCallback,
  useContext,
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
} from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Message } from '../../api/chat-types.ts';
import { ChannelType } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Avatar } from '../../components/Avatar.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { formatNumber } from '../../i18n/format.ts';
import { channelPath, jumpToMessage, useChat } from './context.ts';
import { markdownContext } from './MessageItem.tsx';
import { MessageTime } from './MessageTime.tsx';
import { plainText as markdownPlain } from './markdown.tsx';
import {
  HAS_VALUES,
  isEmptySearch,
  markTerms,
  parseSearch,
  SEARCH_FILTERS,
  type SearchProblem,
  type SearchResolver,
} from './search-query.ts';
import type { ChatStore } from './store.ts';

const PAGE = 25;

/** Where a search looks: a guild's channels, or one DM / group DM. */
export interface SearchScope {
  guildId?: string;
  channelId?: string;
}

export const scopeKey = (scope: SearchScope | null): string | null =>
  scope ? (scope.guildId ? `g${scope.guildId}` : `c${scope.channelId}`) : null;

export function scopeOf(channel: Channel): SearchScope {
  return channel.guild_id ? { guildId: channel.guild_id } : { channelId: channel.id };
}

interface SearchView {
  scope: SearchScope;
  query: string;
  page: number;
  terms: string[];
  status: 'loading' | 'done' | 'error';
  total: number;
  hits: Message[];
  problems: SearchProblem[];
  error: unknown;
}

export interface SearchControl {
  view: SearchView | null;
  draft: string;
  setDraft: (text: string) => void;
  run: (scope: SearchScope, query: string, page: number) => void;
  close: () => void;
  /** The search box on screen (it is remounted with each channel), for Ctrl+F and focus after closing. */
  input: RefObject<HTMLInputElement | null>;
}

const SearchContext = createContext<SearchControl | null>(null);
export const SearchProvider = SearchContext.Provider;

export function useSearch(): SearchControl {
  const control = useContext(SearchContext);
  if (!control) throw new Error('useSearch outside <SearchProvider>');
  return control;
}

/** Names → ids from what the client holds: the guild's members (or the DM's people) and its channels. */
function resolverFor(store: ChatStore, scope: SearchScope): SearchResolver {
  const norm = (s: string) => s.trim().replace(/^[@#]/, '').toLowerCase();
  return {
    user(name) {
      const wanted = norm(name);
      const members = scope.guildId ? [...(store.guilds.get(scope.guildId)?.members.values() ?? [])] : [];
      const people = [
        ...members.map((m) => m.user).filter((u) => !!u),
        ...(scope.channelId ? (store.channels.get(scope.channelId)?.recipients ?? []) : []),
        ...store.users.values(),
      ];
      const byUsername = people.find((u) => u?.username.toLowerCase() === wanted);
      if (byUsername) return byUsername.id;
      return people.find((u) => u && store.displayName(u.id, scope.guildId).toLowerCase() === wanted)?.id;
    },
    channel(name) {
      if (!scope.guildId) return undefined;
      const wanted = norm(name);
      return store.guildChannels(scope.guildId).find((c) => (c.name ?? '').toLowerCase() === wanted)?.id;
    },
  };
}

/** The search state of the tab: kept above the channel view, so a jump to another channel keeps the results. */
export function useSearchControl(store: ChatStore): SearchControl {
  const [view, setView] = useState<SearchView | null>(null);
  const [draft, setDraft] = useState('');
  const input = useRef<HTMLInputElement | null>(null);
  const sequence = useRef(0);

  const run = useCallback(
    (scope: SearchScope, query: string, page: number) => {
      const parsed = parseSearch(query, resolverFor(store, scope));
      if (parsed.problems.length === 0 && isEmptySearch(parsed.params)) return;
      const ticket = ++sequence.current;
      const base = { scope, query, page, terms: parsed.terms, total: 0, hits: [], error: null };
      if (parsed.problems.length > 0) {
        setView({ ...base, status: 'done', problems: parsed.problems });
        return;
      }
      setView((current) => ({
        ...base,
        // The page on screen stays while the next one loads (no jump to an empty panel).
        ...(current && current.query === query && scopeKey(current.scope) === scopeKey(scope)
          ? { total: current.total, hits: current.hits }
          : {}),
        status: 'loading',
        problems: [],
      }));
      store.api
        .search(scope, { ...parsed.params, offset: String(page * PAGE), limit: String(PAGE) })
        .then((answer) => {
          if (ticket !== sequence.current) return;
          const hits = answer.messages.map((group) => group[0]).filter((m): m is Message => !!m);
          setView({ ...base, status: 'done', problems: [], total: answer.total_results, hits });
        })
        .catch((error: unknown) => {
          if (ticket !== sequence.current) return;
          setView({ ...base, status: 'error', problems: [], error });
        });
    },
    [store],
  );

  const close = useCallback(() => {
    sequence.current++;
    setView(null);
  }, []);

  return useMemo(() => ({ view, draft, setDraft, run, close, input }), [view, draft, run, close]);
}

interface Hint {
  id: string;
  label: string;
  detail?: string;
  /** Replaces the word being typed. */
  insert: string;
}

/** Today as `YYYY-MM-DD` in the person's time zone, the format the date filters take. */
function today(): string {
  const d = new Date();
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

function hintsFor(store: ChatStore, scope: SearchScope, word: string, t: (key: string) => string): Hint[] {
  const filter = /^(\w+):(.*)$/.exec(word);
  const key = filter?.[1]?.toLowerCase();
  if (filter && key && (SEARCH_FILTERS as readonly string[]).includes(key)) {
    const value = (filter[2] ?? '').replace(/^"/, '').toLowerCase();
    const quote = (s: string) => (/\s/.test(s) ? `"${s}"` : s);
    if (key === 'from' || key === 'mentions') {
      const members = scope.guildId
        ? [...(store.guilds.get(scope.guildId)?.members.values() ?? [])].map((m) => m.user)
        : [...(store.channels.get(scope.channelId ?? '')?.recipients ?? []), store.users.get(store.me)];
      const out: Hint[] = [];
      for (const user of members) {
        if (!user) continue;
        const name = store.displayName(user.id, scope.guildId);
        if (!user.username.toLowerCase().startsWith(value) && !name.toLowerCase().startsWith(value)) continue;
        out.push({
          id: `u${user.id}`,
          label: `${key}:${user.username}`,
          detail: name,
          insert: `${key}:${user.username} `,
        });
        if (out.length >= 8) break;
      }
      return out;
    }
    if (key === 'in') {
      if (!scope.guildId) return [];
      return store
        .guildChannels(scope.guildId)
        .filter((c) => c.type !== ChannelType.Category && (c.name ?? '').toLowerCase().startsWith(value))
        .slice(0, 8)
        .map((c) => ({ id: `c${c.id}`, label: `in:${c.name}`, insert: `in:${quote(c.name ?? '')} ` }));
    }
    if (key === 'has') {
      return HAS_VALUES.filter((v) => v.startsWith(value)).map((v) => ({
        id: `h${v}`,
        label: `has:${v}`,
        insert: `has:${v} `,
      }));
    }
    if (key === 'pinned') {
      return ['true', 'false']
        .filter((v) => v.startsWith(value))
        .map((v) => ({ id: `p${v}`, label: `pinned:${v}`, insert: `pinned:${v} ` }));
    }
    const date = today();
    return date.startsWith(value)
      ? [{ id: `d${key}`, label: `${key}:${date}`, detail: t('search.dateFormat'), insert: `${key}:${date} ` }]
      : [];
  }
  if (word.includes(':')) return [];
  const lower = word.toLowerCase();
  return SEARCH_FILTERS.filter((f) => f.startsWith(lower) && (f !== 'in' || !!scope.guildId)).map((f) => ({
    id: `f${f}`,
    label: `${f}:`,
    detail: t(`search.filter.${f}`),
    insert: `${f}:`,
  }));
}

/**
 * The search box of the channel header: Enter searches (the guild, or the DM), Ctrl/Cmd+F comes here, Escape
 * closes the hint list, then the results. While the box has focus, a list offers the filters and their values
 * for the word being typed (arrow keys choose, Enter or Tab takes one).
 */
export function SearchBox({ scope }: { scope: SearchScope }) {
  const { t } = useTranslation();
  const store = useChat();
  const search = useSearch();
  const listId = useId();
  const [focused, setFocused] = useState(false);
  const [dismissed, setDismissed] = useState(false);
  const [active, setActive] = useState(-1);
  const [caret, setCaret] = useState(0);
  const { draft, setDraft, input } = search;

  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'f') {
        event.preventDefault();
        input.current?.focus();
        input.current?.select();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [input]);

  const word = /(?:^|\s)(\S*)$/.exec(draft.slice(0, caret))?.[1] ?? '';
  const hints = focused && !dismissed ? hintsFor(store, scope, word, t).slice(0, 8) : [];

  const complete = (hint: Hint) => {
    const start = caret - word.length;
    const next = `${draft.slice(0, start)}${hint.insert}${draft.slice(caret)}`;
    const position = start + hint.insert.length;
    setDraft(next);
    setCaret(position);
    setActive(-1);
    window.requestAnimationFrame(() => {
      if (input.current && input.current.value === next) input.current.setSelectionRange(position, position);
    });
  };

  const submit = () => {
    setDismissed(true);
    setActive(-1);
    search.run(scope, draft, 0);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (hints.length > 0 && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      // Positions -1 (none: Enter searches) to the last hint, round and round.
      const next = active + step;
      setActive(next >= hints.length ? -1 : next < -1 ? hints.length - 1 : next);
      return;
    }
    const hint = hints[active];
    if (hint && (event.key === 'Enter' || event.key === 'Tab')) {
      event.preventDefault();
      complete(hint);
      return;
    }
    if (event.key === 'Enter') {
      event.preventDefault();
      submit();
    } else if (event.key === 'Escape') {
      // Chromium would empty a search field on Escape: the box decides what Escape does here.
      event.preventDefault();
      if (hints.length > 0) setDismissed(true);
      else if (search.view) search.close();
      else if (draft) setDraft('');
    }
  };

  return (
    <search className="search-box">
      <input
        ref={input}
        type="search"
        aria-label={t('search.label')}
        placeholder={t('search.label')}
        value={draft}
        maxLength={1024}
        aria-autocomplete="list"
        aria-controls={hints.length > 0 ? listId : undefined}
        aria-activedescendant={hints[active] ? `${listId}-${active}` : undefined}
        onFocus={() => {
          setFocused(true);
          if (scope.guildId) void store.loadMembers(scope.guildId);
        }}
        onBlur={() => setFocused(false)}
        onChange={(event) => {
          setDraft(event.target.value);
          setCaret(event.target.selectionStart ?? event.target.value.length);
          setDismissed(false);
          setActive(-1);
        }}
        onSelect={(event) => setCaret(event.currentTarget.selectionStart ?? 0)}
        onKeyDown={onKeyDown}
      />
      {hints.length > 0 && (
        <div id={listId} className="search-hints" role="listbox" aria-label={t('search.hints')}>
          {hints.map((hint, index) => (
            <div
              key={hint.id}
              id={`${listId}-${index}`}
              role="option"
              tabIndex={-1}
              aria-selected={index === active}
              onMouseDown={(event) => {
                event.preventDefault();
                complete(hint);
              }}
            >
              <span className="search-hint-label">{hint.label}</span>
              {hint.detail && <span className="search-hint-detail"> {hint.detail}</span>}
            </div>
          ))}
        </div>
      )}
    </search>
  );
}

/** The text of a message as a result shows it: its markdown as the words shown (mentions by name, no markers). */
function plainText(store: ChatStore, message: Message, spoiler: string): string {
  const gid = message.guild_id ?? store.channels.get(message.channel_id)?.guild_id;
  return markdownPlain(message.content, { ...markdownContext(store, gid), spoiler });
}

/** The results of the search box: a labelled region beside the messages; a result opens its message. */
export function SearchResults() {
  const { t } = useTranslation();
  const store = useChat();
  const { navigate } = useApp();
  const search = useSearch();
  const headingId = useId();
  const view = search.view;
  if (!view) return null;
  const pages = Math.max(1, Math.ceil(view.total / PAGE));
  const close = () => {
    search.close();
    search.input.current?.focus();
  };
  const open = (message: Message) => {
    const channel = store.channels.get(message.channel_id);
    const path = channel
      ? channelPath(channel)
      : `/channels/${message.guild_id ?? view.scope.guildId ?? '@me'}/${message.channel_id}`;
    const target = `${path}/${message.id}`;
    // The same result again: the channel is already at that link, so bring the message back into view.
    if (window.location.pathname === target) {
      jumpToMessage(message.id);
    } else {
      navigate(target);
    }
    // On a phone the results cover the messages: the jump shows the message instead.
    if (window.matchMedia('(max-width: 760px)').matches) search.close();
  };
  const problem = (p: SearchProblem) =>
    t(`search.problem.${p.kind}`, { filter: p.filter, value: p.value, values: HAS_VALUES.join(', ') });

  return (
    <section
      className="search-panel"
      aria-labelledby={headingId}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          close();
        }
      }}
    >
      <div className="search-panel-head">
        <h2 id={headingId}>{t('search.results')}</h2>
        <button type="button" className="ghost icon" aria-label={t('search.close')} onClick={close}>
          ✕
        </button>
      </div>
      <p className="search-status" role="status">
        {view.status === 'loading'
          ? t('search.searching')
          : view.status === 'done' && view.problems.length === 0 && view.hits.length > 0
            ? t('search.count', { count: view.total, formatted: formatNumber(view.total) })
            : ''}
      </p>
      {view.problems.length > 0 && (
        <div className="field-error" role="alert">
          {view.problems.map((p) => (
            <p key={`${p.filter}:${p.value}`}>{problem(p)}</p>
          ))}
        </div>
      )}
      {view.status === 'error' && <ErrorNotice error={view.error} />}
      {view.status === 'done' && view.problems.length === 0 && view.hits.length === 0 && (
        <div className="search-empty">
          <p>{t('search.noResults', { query: view.query })}</p>
          <p className="hint">{t('search.noResultsHint')}</p>
        </div>
      )}
      {view.hits.length > 0 && (
        <ol className="search-hits" aria-label={t('search.results')} aria-busy={view.status === 'loading'}>
          {view.hits.map((message) => {
            const channel = store.channels.get(message.channel_id);
            const gid = message.guild_id ?? channel?.guild_id;
            const where = channel ? (gid ? `#${store.channelLabel(channel)}` : store.channelLabel(channel)) : '';
            return (
              <li key={message.id}>
                <button type="button" className="search-hit" onClick={() => open(message)}>
                  <span className="search-hit-head">
                    <Avatar
                      source={store.avatarOf(message.author.id, gid, { user: message.author })}
                      name={store.displayName(message.author.id, gid)}
                      size={20}
                    />
                    <span className="search-hit-author" style={{ color: store.roleColor(gid, message.author.id) }}>
                      {store.displayName(message.author.id, gid)}
                    </span>
                    {where && <span className="search-hit-channel">{where}</span>}
                    <MessageTime timestamp={message.timestamp} />
                  </span>
                  <span className="search-hit-content">
                    {markTerms(plainText(store, message, t('chat.spoiler')), view.terms).map((part, index) =>
                      part.mark ? (
                        // biome-ignore lint/suspicious/noArrayIndexKey: parts of one fixed string
                        <mark key={index}>{part.text}</mark>
                      ) : (
                        part.text
                      ),
                    )}
                    {message.attachments.map((a) => (
                      <span key={a.id} className="search-hit-file">
                        {' '}
                        📎 {a.filename}
                      </span>
                    ))}
                  </span>
                </button>
              </li>
            );
          })}
        </ol>
      )}
      {view.status !== 'error' && view.problems.length === 0 && (view.page > 0 || view.total > PAGE) && (
        <nav className="search-pages" aria-label={t('search.pages')}>
          <button
            type="button"
            className="secondary small"
            disabled={view.page === 0 || view.status === 'loading'}
            onClick={() => search.run(view.scope, view.query, view.page - 1)}
          >
            {t('search.previous')}
          </button>
          <span>{t('search.pageOf', { page: view.page + 1, pages })}</span>
          <button
            type="button"
            className="secondary small"
            disabled={view.page + 1 >= pages || view.hits.length < PAGE || view.status === 'loading'}
            onClick={() => search.run(view.scope, view.query, view.page + 1)}
          >
            {t('search.next')}
          </button>
        </nav>
      )}
    </section>
  );
}
