import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ChatApi } from '../../api/chat.ts';
import { ChannelType } from '../../api/chat-types.ts';
import { useApp } from '../../app-context.tsx';
import { Link } from '../../components/Link.tsx';
import { useLocation } from '../../shell/router.tsx';
import { IncomingCalls } from '../voice/DmCall.tsx';
import { BotModalDialog } from './BotModal.tsx';
import { ChannelSidebar } from './ChannelSidebar.tsx';
import { ChannelView } from './ChannelView.tsx';
import { ChatContext, ChatTranslation, channelPath, useChat } from './context.ts';
import { FriendsView } from './FriendsView.tsx';
import { GuildRail } from './GuildRail.tsx';
import { useKeyboard } from './keyboard.ts';
import { MemberList } from './MemberList.tsx';
import { useNotifications } from './notifications.tsx';
import { QuickSwitcher } from './QuickSwitcher.tsx';
import { SearchProvider, SearchResults, scopeKey, scopeOf, useSearchControl } from './Search.tsx';
import { ChatStore } from './store.ts';
import './chat.css';

/** Server settings: their own chunk, loaded when opened. */
const GuildSettings = lazy(() => import('./guild-settings/GuildSettings.tsx'));

/** Where the banner's dismissal is kept: for the tab's life, per account (a new sign-in shows it again). */
const BANNER_DISMISSED_KEY = 'hearth.unverifiedEmailBannerDismissed';

/**
 * While the account's email is unverified, says so above the chat and links to the settings section that
 * sends the verification email again; dismissed, it stays away for the rest of the tab's session.
 */
function UnverifiedEmailBanner() {
  const { t } = useTranslation();
  const { user } = useApp();
  const [dismissed, setDismissed] = useState(() => {
    try {
      return window.sessionStorage.getItem(BANNER_DISMISSED_KEY) === user?.id;
    } catch {
      return false;
    }
  });
  if (!user?.email || user.verified || dismissed) return null;
  const dismiss = () => {
    setDismissed(true);
    try {
      window.sessionStorage.setItem(BANNER_DISMISSED_KEY, user.id);
    } catch {
      // Storage refused (private mode): dismissed for this page only.
    }
  };
  return (
    <section className="connection-banner gone-notice" aria-label={t('settings.emailNotVerified')}>
      <p>
        {t('chat.emailUnverified', { email: user.email })}{' '}
        <Link href="/settings#account-heading">{t('chat.emailUnverifiedLink')}</Link>
      </p>
      <button type="button" className="ghost" onClick={dismiss}>
        {t('chat.dismissEmailReminder')}
      </button>
    </section>
  );
}

/** Reads `/channels/@me[/cid]` and `/channels/{gid}[/cid]`. */
export function parseChatPath(pathname: string): {
  guildId: string | null;
  channelId: string | null;
  messageId: string | null;
} {
  const [, , scope, channel, message] = pathname.split('/');
  return { guildId: !scope || scope === '@me' ? null : scope, channelId: channel || null, messageId: message || null };
}

/** The width under which the navigation and the member list are drawers (chat.css's phone layout). */
const NARROW = '(max-width: 760px)';

/** The chat client: guild rail, channel list, the open channel (or friends), members. */
export default function ChatPage() {
  const { api, gateway } = useApp();
  const { t } = useTranslation();
  const store = useMemo(() => new ChatStore(new ChatApi(api.http), gateway), [api, gateway]);
  useEffect(() => {
    store.start();
    return () => store.stop();
  }, [store]);
  return (
    <ChatContext.Provider value={store}>
      <ChatTranslation.Provider value={t}>
        <ChatLayout />
      </ChatTranslation.Provider>
    </ChatContext.Provider>
  );
}

function ChatLayout() {
  const { t } = useTranslation();
  const { navigate } = useApp();
  const store = useChat();
  const location = useLocation();
  const parsed = parseChatPath(location.pathname);
  const { guildId, messageId } = parsed;
  // `/channels/{guild_id}/settings` opens the server settings in the message pane.
  const settings = !!guildId && parsed.channelId === 'settings';
  const channelId = settings ? null : parsed.channelId;
  const [navOpen, setNavOpen] = useState(false);
  const [membersOpen, setMembersOpen] = useState(() => window.innerWidth > 1000);
  const [switcher, setSwitcher] = useState(false);
  /** "You can no longer see #x", shown in the channel the view moved to until the person goes elsewhere. */
  const [goneNotice, setGoneNotice] = useState<{ name: string; at?: string } | null>(null);
  const search = useSearchControl(store);

  const guild = guildId ? store.guilds.get(guildId) : undefined;
  const channel = channelId ? store.channels.get(channelId) : undefined;
  const visible = channel && store.canView(channel) ? channel : undefined;

  // A guild URL without a channel (or with one that is hidden now) opens the first text channel. A guild or
  // channel not known yet may be one just created whose event is on its way: wait a moment before leaving.
  // biome-ignore lint/correctness/useExhaustiveDependencies: store.version re-checks after every store change
  useEffect(() => {
    if (!store.ready || !guildId || visible || (settings && store.guilds.get(guildId))) return;
    const leave = () => {
      if (!store.guilds.get(guildId)) {
        navigate('/channels/@me', { replace: true });
        return;
      }
      const first = store.guildChannels(guildId).find((c) => c.type === ChannelType.Text);
      navigate(first ? channelPath(first) : `/channels/${guildId}`, { replace: true });
    };
    // The channel on screen went away (deleted, or the person can no longer view it): leave at once and say so.
    const gone = channelId ? (store.goneChannels.get(channelId) ?? channel?.name) : undefined;
    if (gone !== undefined && gone !== null) {
      setGoneNotice({ name: gone });
      leave();
      return;
    }
    const unknown = !store.guilds.get(guildId) || (channelId && !store.channels.get(channelId));
    if (!unknown) {
      if (channelId || store.guildChannels(guildId).some((c) => c.type === ChannelType.Text)) leave();
      return;
    }
    const timer = window.setTimeout(leave, 3000);
    return () => window.clearTimeout(timer);
  }, [store.ready, guildId, channelId, visible, settings, navigate, store, store.version]);

  // In a large guild, the member statuses of the guild on screen are followed (docs/web.md#member-list).
  useEffect(() => {
    if (store.ready) store.viewGuild(guildId);
  }, [store, store.ready, guildId]);

  useEffect(() => {
    store.activeChannelId = visible?.id ?? null;
    setNavOpen(false);
    // The notice stays on the view it moved to, and goes with the next move.
    // (No channel on screen is the moment in between: the move is still on its way.)
    const here = visible?.id;
    if (here === undefined) return;
    setGoneNotice((notice) =>
      notice === null || notice.at === here ? notice : notice.at === undefined ? { ...notice, at: here } : null,
    );
  }, [visible?.id, store]);

  // Results belong to where they were searched: another guild (or DM, or the friends page) closes them.
  const currentScope = visible ? scopeKey(scopeOf(visible)) : null;
  const { view: searchView, close: closeSearch } = search;
  useEffect(() => {
    if (searchView && scopeKey(searchView.scope) !== currentScope) closeSearch();
  }, [currentScope, searchView, closeSearch]);

  // On a phone the navigation and the member list are drawers over the messages: Escape closes them, as a tap
  // on the dimmed rest of the screen does.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || !window.matchMedia(NARROW).matches) return;
      setNavOpen(false);
      setMembersOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  useNotifications(store, visible?.id ?? null);
  useKeyboard(store, guildId, visible?.id ?? null, () => setSwitcher(true));

  if (!store.ready) {
    return (
      <p className="loading" role="status">
        {t('chat.connecting')}
      </p>
    );
  }

  return (
    <SearchProvider value={search}>
      <div className="chat" data-nav-open={navOpen}>
        <a className="skip-link" href="#main">
          {t('app.skipToContent')}
        </a>
        <div className="chat-nav">
          <GuildRail activeGuildId={guildId} />
          <ChannelSidebar guildId={guildId} channelId={visible?.id ?? null} />
        </div>
        <main id="main" tabIndex={-1} className="chat-main">
          <IncomingCalls />
          {!store.connected && (
            <p className="connection-banner" role="status">
              {t('chat.reconnecting')}
            </p>
          )}
          <UnverifiedEmailBanner />
          {goneNotice && (
            <div className="connection-banner gone-notice">
              <p role="status">{t('chat.channelGone', { name: goneNotice.name })}</p>
              <button type="button" className="ghost" onClick={() => setGoneNotice(null)}>
                {t('chat.dismissNotice')}
              </button>
            </div>
          )}
          {settings && guild ? (
            <Suspense
              fallback={
                <p className="loading" role="status">
                  {t('chat.connecting')}
                </p>
              }
            >
              <GuildSettings guildId={guild.guild.id} onOpenNav={() => setNavOpen(true)} />
            </Suspense>
          ) : visible ? (
            <ChannelView
              key={visible.id}
              channel={visible}
              focusMessageId={messageId}
              onOpenNav={() => setNavOpen(true)}
              membersOpen={membersOpen}
              onToggleMembers={guild ? () => setMembersOpen(!membersOpen) : undefined}
            />
          ) : guildId ? (
            <div className="empty-pane">
              <button type="button" className="ghost nav-toggle" onClick={() => setNavOpen(true)}>
                {t('chat.openNavigation')}
              </button>
              <h1>{guild?.guild.name ?? ''}</h1>
              <p>{t('chat.noChannels')}</p>
            </div>
          ) : (
            <FriendsView onOpenNav={() => setNavOpen(true)} />
          )}
        </main>
        {search.view && visible ? (
          <SearchResults />
        ) : (
          guild && membersOpen && visible && <MemberList guildId={guild.guild.id} channel={visible} />
        )}
        {guild && membersOpen && visible && !search.view && (
          // Drawn on a phone only (chat.css), where the list covers the messages and its toggle.
          <button
            type="button"
            className="scrim members-scrim"
            aria-label={t('chat.closeMembers')}
            onClick={() => setMembersOpen(false)}
          />
        )}
        {navOpen && (
          <button
            type="button"
            className="scrim"
            aria-label={t('chat.closeNavigation')}
            onClick={() => setNavOpen(false)}
          />
        )}
        {switcher && <QuickSwitcher onClose={() => setSwitcher(false)} />}
        <BotModalDialog />
      </div>
    </SearchProvider>
  );
}
