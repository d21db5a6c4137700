import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Message } from '../../api/chat-types.ts';
import { LiveAnnouncer } from '../../components/LiveAnnouncer.tsx';
import { JUMP_TO_MESSAGE_EVENT, useChatHistory } from './context.ts';
import { isSystemMessage, MessageItem, markdownContext } from './MessageItem.tsx';
import { plainText } from './markdown.tsx';
import { compareIds, idTime } from './snowflake.ts';

const GROUP_MS = 7 * 60 * 1000;

/**
 * The history of a channel: scrolls back by loading older pages while keeping what is on screen still
 * (the distance from the bottom is restored after a prepend), sticks to the bottom while there, and
 * otherwise shows a "new messages" bar. New messages from others are read out through a polite live region.
 */
export function MessageList({
  channel,
  focusMessageId,
  onReply,
  editing,
  setEditing,
}: {
  channel: Channel;
  focusMessageId: string | null;
  onReply: (message: Message) => void;
  editing: string | null;
  setEditing: (id: string | null) => void;
}) {
  const { t } = useTranslation();
  const store = useChatHistory();
  const history = store.historyOf(channel.id);
  const pending = store.pending.get(channel.id) ?? [];
  const scroller = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const fromBottom = useRef(0);
  const firstId = useRef<string | undefined>(undefined);
  const [unseen, setUnseen] = useState(0);
  const [announce, setAnnounce] = useState({ text: '', sequence: 0 });
  const [highlight, setHighlight] = useState<string | null>(null);
  const lastSeen = useRef<string | undefined>(undefined);
  // The read marker as it was when the channel opened: the "new" line sits above the first unread.
  const [readMarker] = useState(() => store.readStates.get(channel.id));

  const items = history.items;
  const newest = items.at(-1);
  const list = useRef<HTMLOListElement>(null);
  /** A message on screen and its distance from the pane's top, restored when the window changes above it. */
  const anchor = useRef<{ id: string; top: number } | null>(null);
  /** The message a jump is waiting to bring into view once its window is rendered. */
  const jumpTarget = useRef<string | null>(null);
  const presentLoads = useRef(history.presentLoads);
  const highlightTimer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(highlightTimer.current), []);

  /** Finds the first row at the pane's top (binary search: rows are in order) and remembers where it is. */
  const rememberAnchor = useCallback(() => {
    const el = scroller.current;
    const rows = list.current?.children;
    if (!el || !rows || rows.length === 0) return;
    const top = el.getBoundingClientRect().top;
    let low = 0;
    let high = rows.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((rows[middle] as HTMLElement).getBoundingClientRect().bottom <= top) low = middle + 1;
      else high = middle;
    }
    const row = rows[low] as HTMLElement;
    anchor.current = row.id ? { id: row.id, top: row.getBoundingClientRect().top - top } : null;
  }, []);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const first = items[0]?.id;
    if (history.presentLoads !== presentLoads.current) {
      // "Jump to present" (or a message sent from far back): the newest page, from its bottom.
      presentLoads.current = history.presentLoads;
      atBottom.current = true;
    }
    const target = jumpTarget.current ? document.getElementById(`message-${jumpTarget.current}`) : null;
    if (target && jumpTarget.current) {
      const id = jumpTarget.current;
      jumpTarget.current = null;
      atBottom.current = false;
      target.scrollIntoView({ block: 'center' });
      target.focus({ preventScroll: true });
      setHighlight(id);
      window.clearTimeout(highlightTimer.current);
      highlightTimer.current = window.setTimeout(() => setHighlight(null), 2000);
    } else if (jumpTarget.current && !history.loading) {
      // The message is gone (deleted, or not in this channel): nothing to bring into view.
      jumpTarget.current = null;
    } else if (atBottom.current && history.atPresent) {
      el.scrollTop = el.scrollHeight;
    } else {
      // Older messages put above, the oldest dropped, a loading line: keep the same content under the eyes.
      const kept = anchor.current ? document.getElementById(anchor.current.id) : null;
      if (kept && anchor.current) {
        const moved = kept.getBoundingClientRect().top - el.getBoundingClientRect().top - anchor.current.top;
        if (moved !== 0) el.scrollTop += moved;
      } else if (firstId.current && first && compareIds(first, firstId.current) < 0) {
        el.scrollTop = el.scrollHeight - el.clientHeight - fromBottom.current;
      }
    }
    firstId.current = first;
    fromBottom.current = el.scrollHeight - el.clientHeight - el.scrollTop;
    rememberAnchor();
  });

  // New messages: count the unseen ones when scrolled up, announce others' messages. Only live ones: a page
  // of history loaded on the way back down to the present is not news.
  const wasAtPresent = useRef(history.atPresent);
  useEffect(() => {
    const live = wasAtPresent.current && history.atPresent;
    wasAtPresent.current = history.atPresent;
    if (!newest) return;
    const previous = lastSeen.current;
    lastSeen.current = newest.id;
    if (!live || !previous || compareIds(newest.id, previous) <= 0) return;
    const fresh = items.filter((m) => compareIds(m.id, previous) > 0 && m.author.id !== store.me);
    if (fresh.length === 0) return;
    // Each of the last few, as shown (mentions by name, a spoiler as its word; a file alone as "1 attachment"),
    // numbered so the same words twice are said twice.
    const ctx = { ...markdownContext(store, channel.guild_id), spoiler: t('chat.spoiler') };
    const said = fresh.slice(-3).map((m) => {
      const text = plainText(m.content, ctx).slice(0, 200);
      const files = m.attachments.length > 0 ? t('chat.attachmentCount', { count: m.attachments.length }) : '';
      return t('chat.announce', {
        name: store.displayName(m.author.id, channel.guild_id),
        text: [text, files].filter(Boolean).join(', '),
      });
    });
    setAnnounce((previous) => ({ text: said.join('\n'), sequence: previous.sequence + 1 }));
    if (!atBottom.current) setUnseen((n) => n + fresh.length);
  }, [newest, items, store, channel.guild_id, t, history.atPresent]);

  // On screen and at the bottom of a visible tab = read.
  useEffect(() => {
    if (newest && atBottom.current && document.visibilityState === 'visible') store.markRead(channel.id, newest.id);
  }, [newest, store, channel.id]);

  useEffect(() => {
    const onVisible = () => {
      if (document.visibilityState === 'visible' && atBottom.current && newest) store.markRead(channel.id, newest.id);
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => document.removeEventListener('visibilitychange', onVisible);
  }, [newest, store, channel.id]);

  // The first unread message when the channel opened; a bar offers to jump up to it while it is above view
  // (on screen above, or older than the window holds).
  const firstUnread = readMarker
    ? items.find((m) => compareIds(m.id, readMarker) > 0 && m.author.id !== store.me)
    : undefined;
  const unreadBeyondWindow =
    !!readMarker && !!firstUnread && !history.reachedStart && compareIds(readMarker, items[0]?.id ?? '0') < 0;
  const [unreadAbove, setUnreadAbove] = useState(false);
  const [unreadDismissed, setUnreadDismissed] = useState(false);
  const checkUnreadAbove = useCallback(() => {
    const el = scroller.current;
    const target = firstUnread ? document.getElementById(`message-${firstUnread.id}`) : null;
    setUnreadAbove(unreadBeyondWindow || (!!el && !!target && target.offsetTop < el.scrollTop));
  }, [firstUnread, unreadBeyondWindow]);
  useEffect(() => {
    checkUnreadAbove();
  }, [checkUnreadAbove]);

  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    checkUnreadAbove();
    rememberAnchor();
    fromBottom.current = el.scrollHeight - el.clientHeight - el.scrollTop;
    atBottom.current = fromBottom.current < 40;
    if (atBottom.current && history.atPresent) {
      setUnseen(0);
      if (newest) store.markRead(channel.id, newest.id);
    }
    if (history.loading) return;
    if (el.scrollTop < 300 && !history.reachedStart) void store.loadOlder(channel.id);
    else if (fromBottom.current < 300 && !history.atPresent) void store.loadNewer(channel.id);
  }, [
    history.loading,
    history.reachedStart,
    history.atPresent,
    store,
    channel.id,
    newest,
    checkUnreadAbove,
    rememberAnchor,
  ]);

  // A short history that does not fill the pane: keep loading until it scrolls or the start is reached.
  useEffect(() => {
    const el = scroller.current;
    if (el && items.length > 0 && el.scrollHeight <= el.clientHeight && !history.reachedStart && !history.loading) {
      void store.loadOlder(channel.id);
    }
  }, [items.length, history.reachedStart, history.loading, store, channel.id]);

  const jumpToPresent = () => {
    atBottom.current = true;
    setUnseen(0);
    if (!history.atPresent) {
      void store.loadPresent(channel.id);
      return;
    }
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
  };

  /** Brings a message into view and highlights it, loading the window around it first when it is not held. */
  const jumpTo = useCallback(
    async (id: string) => {
      if (!id) return;
      jumpTarget.current = id;
      atBottom.current = false;
      await store.loadAround(channel.id, id);
      // Held already, or loaded: the layout effect scrolls to it on the render this asks for.
      setJumps((n) => n + 1);
    },
    [store, channel.id],
  );
  const [, setJumps] = useState(0);

  // A jump asked for while the address already names the message (jumpToMessage).
  useEffect(() => {
    const onJump = (event: Event) => void jumpTo((event as CustomEvent<string>).detail);
    window.addEventListener(JUMP_TO_MESSAGE_EVENT, onJump);
    return () => window.removeEventListener(JUMP_TO_MESSAGE_EVENT, onJump);
  }, [jumpTo]);

  /** The first message after the read marker, loaded around the marker when the window does not reach back. */
  const jumpToFirstUnread = async () => {
    if (!readMarker) return;
    if (unreadBeyondWindow) await store.loadAround(channel.id, readMarker);
    const target = store
      .historyOf(channel.id)
      .items.find((m) => compareIds(m.id, readMarker) > 0 && m.author.id !== store.me);
    if (target) await jumpTo(target.id);
  };

  // A message link: once the first page is in, load the window around the message and bring it into view.
  const focused = useRef<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the target or the first page changes
  useEffect(() => {
    if (!focusMessageId || focused.current === focusMessageId || items.length === 0) return;
    focused.current = focusMessageId;
    void jumpTo(focusMessageId);
  }, [focusMessageId, items.length > 0]);

  const name = store.channelLabel(channel);
  let markerShown = false;
  return (
    <div className="message-pane">
      {unseen === 0 && unreadAbove && !unreadDismissed && firstUnread && (
        <div className="new-messages-bar unread-bar">
          <button
            type="button"
            className="link"
            onClick={() => {
              setUnreadDismissed(true);
              void jumpToFirstUnread();
            }}
          >
            {t('chat.jumpToUnread')}
          </button>
          <button type="button" className="link" onClick={() => setUnreadDismissed(true)}>
            {t('chat.dismiss')}
          </button>
        </div>
      )}
      {history.atPresent && unseen > 0 && (
        <button type="button" className="new-messages-bar" onClick={jumpToPresent}>
          {t('chat.newMessages', { count: unseen })}
        </button>
      )}
      {!history.atPresent && items.length > 0 && (
        <button type="button" className="jump-to-present" onClick={jumpToPresent}>
          {t('chat.jumpToPresent')}
        </button>
      )}
      <div className="messages" ref={scroller} onScroll={onScroll}>
        {history.reachedStart && (
          <div className="channel-start">
            {/* A conversation is not a place one is welcomed to: its start names the person or the group. */}
            <p className="md-h2">{channel.type === 1 || channel.type === 3 ? name : t('chat.welcomeTo', { name })}</p>
            <p>
              {channel.type === 1
                ? t('chat.dmStart', { name })
                : channel.type === 3
                  ? t('chat.groupDmStart', { name })
                  : t('chat.channelStart')}
            </p>
          </div>
        )}
        {history.loading && (
          <p className="loading-older" role="status">
            {t('app.loading')}
          </p>
        )}
        <ol ref={list} className="message-list" aria-label={t('chat.messagesIn', { name })}>
          {items.map((message, index) => {
            const previous = items[index - 1];
            // A message after a line of the conversation (its author's "joined the server") starts a group: it
            // shows its author.
            const grouped =
              !!previous &&
              previous.author.id === message.author.id &&
              message.type !== 19 &&
              !isSystemMessage(previous) &&
              !isSystemMessage(message) &&
              idTime(message.id) - idTime(previous.id) < GROUP_MS;
            const showMarker =
              !markerShown &&
              !!readMarker &&
              compareIds(message.id, readMarker) > 0 &&
              message.author.id !== store.me &&
              index > 0;
            if (showMarker) markerShown = true;
            return (
              <MessageItem
                key={message.id}
                meta={store.metaVersion}
                message={message}
                channel={channel}
                grouped={grouped && !showMarker}
                newMarker={showMarker}
                highlighted={highlight === message.id}
                editing={editing === message.id}
                setEditing={setEditing}
                onReply={onReply}
                onJump={jumpTo}
              />
            );
          })}
          {history.atPresent &&
            pending.map((p) => (
              <li key={p.nonce} className={`message pending${p.failed ? ' failed' : ''}`}>
                <div className="message-body">
                  <p className="md-p">{p.content}</p>
                  {p.files?.map((file) => (
                    <p key={file} className="upload">
                      {file}{' '}
                      {p.progress !== undefined && !p.failed && (
                        <progress max={1} value={p.progress} aria-label={t('chat.uploading', { name: file })} />
                      )}
                    </p>
                  ))}
                  {p.failed && (
                    <p className="field-error">
                      {t('chat.sendFailed')}{' '}
                      <button type="button" className="link" onClick={() => store.dismissPending(channel.id, p.nonce)}>
                        {t('chat.dismiss')}
                      </button>
                    </p>
                  )}
                </div>
              </li>
            ))}
        </ol>
      </div>
      <LiveAnnouncer text={announce.text} sequence={announce.sequence} />
    </div>
  );
}
