import { type KeyboardEvent, memo, useCallback, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Attachment, Channel, Message } from '../../api/chat-types.ts';
import { Avatar } from '../../components/Avatar.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { formatBytes } from '../../i18n/format.ts';
import { AppsMenu, MESSAGE_COMMAND } from './AppsMenu.tsx';
import { MessageComponents } from './Components.tsx';
import { channelPath, useChatStore, useChatT } from './context.ts';
import { Dialog } from './Dialog.tsx';
import { EmojiPicker, type PickedEmoji, reactionKey } from './EmojiPicker.tsx';
import { resolveShortcodes } from './emoji.ts';
import { ForwardDialog } from './ForwardDialog.tsx';
import { MessageTime, useMessageTime } from './MessageTime.tsx';
import { Markdown, type MarkdownContext, plainText } from './markdown.tsx';
import { has, P } from './permissions.ts';
import { ReportDialog } from './ReportDialog.tsx';
import type { ChatStore } from './store.ts';
import { UserPopout } from './UserPopout.tsx';

const QUICK_REACTIONS = ['👍', '❤️', '😂', '🎉', '😮', '😢', '👀', '✅'];

/**
 * A line of the conversation rather than a message: 1/2 someone added to / removed from (or left) a group
 * conversation; 3 a DM call; 4 the group renamed; 5 the group's icon changed; 7 a member joined; 18 a thread
 * started.
 */
export function isSystemMessage(message: Pick<Message, 'type'>): boolean {
  return [1, 2, 3, 4, 5, 7, 18].includes(message.type);
}

/** A text cut to `max` characters, with an ellipsis when it was longer. */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
}

/**
 * What a screen reader says for a message row, as the platform's clients do: its name is the author, the text
 * (as shown: mentions by name, a spoiler as its word) and the time, then "edited"; its description the reply
 * context and the number of attachments, briefly.
 */
export function messageSpeech(
  message: Message,
  author: string,
  time: string,
  ctx: MarkdownContext,
  t: ReturnType<typeof useChatT>,
  replyAuthor: string | undefined,
): { label: string; description: string | undefined } {
  const text = clip(plainText(message.content, ctx), 300);
  let label = text
    ? t('chat.messageLabelText', { name: author, text, time })
    : t('chat.messageLabel', { name: author, time });
  if (message.edited_timestamp) label += `, ${t('chat.editedLabel')}`;
  const described: string[] = [];
  const reply = message.referenced_message;
  if (reply && replyAuthor !== undefined) {
    described.push(t('chat.inReplyTo', { name: replyAuthor, text: clip(plainText(reply.content, ctx), 60) }));
  }
  const forwarded = message.message_snapshots?.[0]?.message;
  if (forwarded) described.push(t('chat.forwardedSnapshot', { text: clip(plainText(forwarded.content, ctx), 120) }));
  if (message.attachments.length > 0) described.push(t('chat.attachmentCount', { count: message.attachments.length }));
  return { label, description: described.length > 0 ? described.join(', ') : undefined };
}

/** The replied-to message under a reply, as its words show (markdown rendered to plain text), else its files. */
function replySnippet(reply: Message, ctx: MarkdownContext): string {
  const text = plainText(reply.content, ctx);
  return clip(text || (reply.attachments ?? []).map((a) => a.filename).join(', '), 100);
}

function useMarkdownContext(channel: Channel): MarkdownContext {
  return markdownContext(useChatStore(), channel.guild_id);
}

/** How a channel's messages name users, roles and channels. */
export function markdownContext(store: ChatStore, gid: string | undefined): MarkdownContext {
  return {
    me: store.me,
    userName: (id) => store.displayName(id, gid),
    roleName: (id) => (gid ? store.guilds.get(gid)?.roles.get(id)?.name : undefined),
    channelName: (id) => store.channels.get(id)?.name ?? undefined,
  };
}

function Item({
  message,
  channel,
  grouped,
  newMarker,
  highlighted,
  editing,
  setEditing,
  onReply,
  onJump,
}: {
  /** The store's metaVersion: re-renders the row when names, roles or permissions may have changed. */
  meta: number;
  message: Message;
  channel: Channel;
  grouped: boolean;
  newMarker: boolean;
  highlighted: boolean;
  editing: boolean;
  setEditing: (id: string | null) => void;
  onReply: (message: Message) => void;
  onJump: (id: string) => void;
}) {
  const t = useChatT();
  const store = useChatStore();
  const ctx = useMarkdownContext(channel);
  const [error, setError] = useState<unknown>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [reporting, setReporting] = useState(false);
  const [picker, setPicker] = useState(false);
  const [fullPicker, setFullPicker] = useState(false);
  const fullPickerButton = useRef<HTMLButtonElement>(null);
  const closeFullPicker = useCallback(() => {
    setFullPicker(false);
    window.requestAnimationFrame(() => fullPickerButton.current?.focus());
  }, []);
  const [popout, setPopout] = useState(false);
  const [lightbox, setLightbox] = useState<Attachment | null>(null);
  const [removing, setRemoving] = useState<Attachment | null>(null);
  const [forwarding, setForwarding] = useState(false);
  const [copied, setCopied] = useState(false);
  const ephemeral = ((message.flags ?? 0) & 64) !== 0;
  const perms = store.permissions(channel);
  const mine = message.author.id === store.me;
  const author = store.displayName(message.author.id, channel.guild_id);
  const time = useMessageTime(message.timestamp).shown;
  // A DM call's `call` says whether it ended; a renamed group's and a thread's content is the new name.
  const system = isSystemMessage(message);
  // The user a group change is about; a removed user may be gone from the store, so the message's own copy.
  const subject = message.mentions[0];
  const subjectName = subject ? (subject.global_name ?? subject.username) : '';
  const mentioned =
    message.mention_everyone ||
    message.mentions.some((u) => u.id === store.me) ||
    (message.referenced_message?.author.id === store.me && message.mentions.some((u) => u.id === store.me));

  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError(caught);
    }
  };
  const toggleReaction = (emoji: string, on: boolean) => run(() => store.api.react(channel.id, message.id, emoji, on));
  /** A pick from the full picker: adds the reaction, or takes it back when it is already one's own. */
  const reactWith = (emoji: PickedEmoji) => {
    setFullPicker(false);
    setPicker(false);
    const existing = message.reactions?.find((r) =>
      emoji.kind === 'custom' ? r.emoji.id === emoji.id : !r.emoji.id && r.emoji.name === emoji.char,
    );
    void toggleReaction(reactionKey(emoji), !existing?.me);
    // The picker and the reaction bar are gone: the focus goes back to the message, not to the page's start.
    window.requestAnimationFrame(() => document.getElementById(`message-${message.id}`)?.focus());
  };

  if (system) {
    return (
      <li id={`message-${message.id}`} className="message system" tabIndex={-1}>
        <p>
          {message.type === 3
            ? t(message.call?.ended_timestamp ? 'voice.callEnded' : 'voice.callStarted', { name: author })
            : message.type === 18
              ? t('chat.threadStarted', { name: author, thread: message.content })
              : message.type === 1
                ? t('chat.recipientAdded', { name: author, target: subjectName })
                : message.type === 2
                  ? subject?.id === message.author.id
                    ? t('chat.recipientLeft', { name: author })
                    : t('chat.recipientRemoved', { name: author, target: subjectName })
                  : message.type === 4
                    ? t('chat.groupRenamed', { name: author, group: message.content })
                    : message.type === 5
                      ? t('chat.groupIconChanged', { name: author })
                      : t('chat.joined', { name: author })}
        </p>
      </li>
    );
  }

  const { label, description } = messageSpeech(
    message,
    author,
    time,
    { ...ctx, spoiler: t('chat.spoiler') },
    t,
    message.referenced_message ? store.displayName(message.referenced_message.author.id, channel.guild_id) : undefined,
  );
  return (
    <li
      id={`message-${message.id}`}
      tabIndex={-1}
      className={`message${grouped ? ' grouped' : ''}${mentioned ? ' mentioned' : ''}${highlighted ? ' highlighted' : ''}`}
      aria-label={label}
      aria-description={description}
      data-message-id={message.id}
    >
      {newMarker && (
        <div className="new-marker">
          <span>{t('chat.newSeparator')}</span>
        </div>
      )}
      {message.referenced_message && (
        // Named apart from the toolbar's "Reply" (a by-name search for one must not find the other) and for what
        // it does: it jumps to the message this one answers.
        <button type="button" className="reply-ref" onClick={() => onJump(message.referenced_message?.id ?? '')}>
          {/* Seen: "↱ @Alice Hello Bob…" (the words the message shows, not its markdown); heard: what it does. */}
          <span aria-hidden="true">↱ </span>
          <span className="visually-hidden">
            {t('chat.jumpToReplied', {
              name: store.displayName(message.referenced_message.author.id, channel.guild_id),
            })}{' '}
          </span>
          <span aria-hidden="true" className="reply-author">
            @{store.displayName(message.referenced_message.author.id, channel.guild_id)}{' '}
          </span>
          <span className="reply-snippet">
            {replySnippet(message.referenced_message, { ...ctx, spoiler: t('chat.spoiler') })}
          </span>
        </button>
      )}
      {/* A reply whose message was deleted since: the server sends `referenced_message: null` (docs/chat.md). */}
      {message.type === 19 && message.referenced_message === null && (
        <p className="reply-ref reply-deleted">
          <span aria-hidden="true">↱ </span>
          {t('chat.replyOriginalDeleted')}
        </p>
      )}
      {!grouped && (
        <div className="message-head">
          <button
            type="button"
            className="author"
            style={{ color: store.roleColor(channel.guild_id, message.author.id) }}
            onClick={() => setPopout(!popout)}
            aria-expanded={popout}
          >
            {/* In the author's button, so a click on the picture opens the card too; drawn left of the head. */}
            <Avatar
              source={store.avatarOf(message.author.id, channel.guild_id, {
                user: message.author,
                ...(message.member ? { member: message.member } : {}),
              })}
              name={author}
              size={40}
              className="message-avatar"
            />
            {author}
          </button>
          {message.author.bot && <span className="tag">{t('chat.bot')}</span>}
          <MessageTime timestamp={message.timestamp} />
        </div>
      )}
      {popout && (
        <UserPopout
          userId={message.author.id}
          guildId={channel.guild_id}
          channel={channel}
          onClose={() => setPopout(false)}
        />
      )}
      <div className="message-body">
        {editing ? (
          <EditBox
            initial={message.content}
            onSave={(typed) =>
              run(async () => {
                const guildEmojis = channel.guild_id ? (store.guilds.get(channel.guild_id)?.guild.emojis ?? []) : [];
                const content = resolveShortcodes(typed, guildEmojis);
                if (content !== message.content) await store.api.edit(channel.id, message.id, content);
                setEditing(null);
              })
            }
            onCancel={() => setEditing(null)}
          />
        ) : (
          message.content && (
            <div className="content">
              <Markdown source={message.content} ctx={ctx} />
              {message.edited_timestamp && <span className="edited">{t('chat.edited')}</span>}
            </div>
          )
        )}
        {message.message_snapshots?.map((snapshot, index) => (
          // A forward shows what it copied, frozen, under a "Forwarded" mark (docs/chat.md, "Forwarding").
          // biome-ignore lint/suspicious/noArrayIndexKey: snapshots have no id and never reorder
          <div key={`${message.id}-s${index}`} className="forwarded">
            <p className="forwarded-label">
              <span aria-hidden="true">↪ </span>
              {t('chat.forwarded')}
            </p>
            {snapshot.message.content && (
              <div className="content">
                <Markdown source={snapshot.message.content} ctx={ctx} />
              </div>
            )}
            {snapshot.message.attachments.map((attachment) => (
              <AttachmentView key={attachment.id} attachment={attachment} onOpen={() => setLightbox(attachment)} />
            ))}
            {snapshot.message.embeds.map((embed, embedIndex) => (
              <div
                // biome-ignore lint/suspicious/noArrayIndexKey: embeds have no id and never reorder
                key={`${message.id}-s${index}-e${embedIndex}`}
                className="embed"
                style={{ borderColor: embed.color ? `#${embed.color.toString(16).padStart(6, '0')}` : undefined }}
              >
                {embed.title && <p className="embed-title">{embed.title}</p>}
                {embed.description && <Markdown source={embed.description} ctx={ctx} />}
              </div>
            ))}
          </div>
        ))}
        {message.attachments.map((attachment) => (
          <div key={attachment.id} className="attachment-item">
            <AttachmentView attachment={attachment} onOpen={() => setLightbox(attachment)} />
            {/* One's own file can go (after a confirmation); not the last thing a message holds: delete it instead. */}
            {mine && !ephemeral && (message.content.trim() !== '' || message.attachments.length > 1) && (
              <button
                type="button"
                className="ghost icon attachment-remove"
                aria-label={t('chat.removeAttachment', { name: attachment.filename })}
                title={t('chat.removeAttachment', { name: attachment.filename })}
                onClick={() => setRemoving(attachment)}
              >
                ✕
              </button>
            )}
          </div>
        ))}
        {message.embeds.map((embed, index) => (
          <div
            // biome-ignore lint/suspicious/noArrayIndexKey: embeds have no id and never reorder
            key={`${message.id}-e${index}`}
            className="embed"
            style={{ borderColor: embed.color ? `#${embed.color.toString(16).padStart(6, '0')}` : undefined }}
          >
            {embed.title && <p className="embed-title">{embed.title}</p>}
            {embed.description && <Markdown source={embed.description} ctx={ctx} />}
          </div>
        ))}
        {!!message.components?.length && <MessageComponents message={message} channel={channel} />}
        {ephemeral && (
          <p className="hint ephemeral">
            {t('chat.onlyYou')}{' '}
            <button type="button" className="link" onClick={() => store.dismissEphemeral(channel.id, message.id)}>
              {t('chat.dismissEphemeral')}
            </button>
          </p>
        )}
        {copied && (
          <p role="status" className="hint">
            {t('chat.linkCopied')}
          </p>
        )}
        {message.reactions && message.reactions.length > 0 && (
          <ul className="reactions" aria-label={t('chat.reactions')}>
            {message.reactions.map((reaction) => {
              const key = reaction.emoji.id ? `${reaction.emoji.name}:${reaction.emoji.id}` : reaction.emoji.name;
              return (
                <li key={key}>
                  <button
                    type="button"
                    className={reaction.me ? 'reaction me' : 'reaction'}
                    aria-pressed={reaction.me}
                    aria-label={t('chat.reactionLabel', { emoji: reaction.emoji.name, count: reaction.count })}
                    onClick={() => toggleReaction(key, !reaction.me)}
                  >
                    {reaction.emoji.id ? (
                      <img
                        className="emoji"
                        alt=""
                        src={`/media/emojis/${reaction.emoji.id}.${reaction.emoji.animated ? 'gif' : 'png'}`}
                        width={18}
                        height={18}
                      />
                    ) : (
                      <span aria-hidden="true">{reaction.emoji.name}</span>
                    )}{' '}
                    <span aria-hidden="true">{reaction.count}</span>
                  </button>
                </li>
              );
            })}
          </ul>
        )}
        {!!error && <ErrorNotice error={error} />}
      </div>
      {/* An ephemeral message exists only in this tab: the server knows no message to react to, pin or forward. */}
      {!ephemeral && (
        <div className="message-actions" role="toolbar" aria-label={t('chat.messageActions', { name: author })}>
          <button
            type="button"
            className="ghost icon"
            aria-label={t('chat.addReaction')}
            title={t('chat.addReaction')}
            aria-expanded={picker}
            onClick={() => setPicker(!picker)}
          >
            ☺
          </button>
          <button
            type="button"
            className="ghost icon"
            aria-label={t('chat.reply')}
            title={t('chat.reply')}
            onClick={() => onReply(message)}
          >
            ↩
          </button>
          {mine && !message.message_snapshots && (
            <button
              type="button"
              className="ghost icon"
              aria-label={t('chat.edit')}
              title={t('chat.edit')}
              onClick={() => setEditing(message.id)}
            >
              ✎
            </button>
          )}
          {has(perms, P.PIN_MESSAGES) && (
            <button
              type="button"
              className="ghost icon"
              aria-label={message.pinned ? t('chat.unpin') : t('chat.pin')}
              title={message.pinned ? t('chat.unpin') : t('chat.pin')}
              onClick={() => run(() => store.api.pin(channel.id, message.id, !message.pinned))}
            >
              📌
            </button>
          )}
          <button
            type="button"
            className="ghost icon"
            aria-label={t('chat.copyMessageLink')}
            title={t('chat.copyMessageLink')}
            onClick={() =>
              void navigator.clipboard
                ?.writeText(`${window.location.origin}${channelPath(channel)}/${message.id}`)
                .then(() => {
                  setCopied(true);
                  window.setTimeout(() => setCopied(false), 3000);
                }, setError)
            }
          >
            🔗
          </button>
          <button
            type="button"
            className="ghost icon"
            aria-label={t('chat.forward')}
            title={t('chat.forward')}
            aria-haspopup="dialog"
            onClick={() => setForwarding(true)}
          >
            ➦
          </button>
          <AppsMenu channel={channel} type={MESSAGE_COMMAND} targetId={message.id} onError={setError} />
          {!mine && (
            <button
              type="button"
              className="ghost icon"
              aria-label={t('chat.reportMessage')}
              title={t('chat.reportMessage')}
              aria-haspopup="dialog"
              onClick={() => setReporting(true)}
            >
              ⚑
            </button>
          )}
          {(mine || has(perms, P.MANAGE_MESSAGES)) && (
            <button
              type="button"
              className="ghost icon danger"
              aria-label={t('chat.delete')}
              title={t('chat.delete')}
              onClick={(event) =>
                event.shiftKey ? void run(() => store.api.remove(channel.id, message.id)) : setConfirmDelete(true)
              }
            >
              🗑
            </button>
          )}
        </div>
      )}
      {picker && (
        <fieldset className="reaction-picker">
          <legend className="visually-hidden">{t('chat.pickReaction')}</legend>
          {QUICK_REACTIONS.map((emoji) => (
            <button
              key={emoji}
              type="button"
              className="ghost icon"
              aria-label={t('chat.reactWith', { emoji })}
              onClick={() => {
                setPicker(false);
                const existing = message.reactions?.find((r) => r.emoji.name === emoji);
                void toggleReaction(emoji, !existing?.me);
              }}
            >
              {emoji}
            </button>
          ))}
          {(channel.guild_id ? (store.guilds.get(channel.guild_id)?.guild.emojis ?? []) : []).map((emoji) => (
            <button
              key={emoji.id}
              type="button"
              className="ghost icon"
              aria-label={t('chat.reactWith', { emoji: `:${emoji.name}:` })}
              onClick={() => {
                setPicker(false);
                const existing = message.reactions?.find((r) => r.emoji.id === emoji.id);
                void toggleReaction(`${emoji.name}:${emoji.id}`, !existing?.me);
              }}
            >
              <img
                className="emoji"
                src={`/media/emojis/${emoji.id}.${emoji.animated ? 'gif' : 'png'}`}
                alt=""
                width={22}
                height={22}
              />
            </button>
          ))}
          <button
            ref={fullPickerButton}
            type="button"
            className="ghost small"
            aria-expanded={fullPicker}
            aria-haspopup="dialog"
            onClick={() => setFullPicker(!fullPicker)}
          >
            {t('emoji.moreReactions')}
          </button>
        </fieldset>
      )}
      {picker && fullPicker && (
        <EmojiPicker
          className="inline"
          custom={channel.guild_id ? (store.guilds.get(channel.guild_id)?.guild.emojis ?? []) : []}
          customTitle={t('emoji.custom', { name: store.guilds.get(channel.guild_id ?? '')?.guild.name ?? '' })}
          anchor={fullPickerButton}
          onPick={reactWith}
          onClose={closeFullPicker}
        />
      )}
      {confirmDelete && (
        <Dialog title={t('chat.deleteTitle')} onClose={() => setConfirmDelete(false)}>
          <p>{t('chat.deleteConfirm')}</p>
          <blockquote className="quote-preview">{message.content.slice(0, 300)}</blockquote>
          <div className="dialog-actions">
            <button type="button" className="secondary" onClick={() => setConfirmDelete(false)}>
              {t('common.cancel')}
            </button>
            <button
              type="button"
              className="danger"
              onClick={() => {
                setConfirmDelete(false);
                void run(() => store.api.remove(channel.id, message.id));
              }}
            >
              {t('chat.delete')}
            </button>
          </div>
        </Dialog>
      )}
      {removing && (
        <Dialog title={t('chat.removeAttachmentTitle')} onClose={() => setRemoving(null)}>
          <p>{t('chat.removeAttachmentConfirm', { name: removing.filename })}</p>
          <div className="dialog-actions">
            <button type="button" className="secondary" onClick={() => setRemoving(null)}>
              {t('common.cancel')}
            </button>
            <button
              type="button"
              className="danger"
              onClick={() => {
                const kept = message.attachments.filter((a) => a.id !== removing.id).map((a) => a.id);
                setRemoving(null);
                void run(() => store.api.keepAttachments(channel.id, message.id, kept));
              }}
            >
              {t('chat.removeAttachmentAction')}
            </button>
          </div>
        </Dialog>
      )}
      {forwarding && <ForwardDialog message={message} channel={channel} onClose={() => setForwarding(false)} />}
      {reporting && <ReportDialog message={message} author={author} onClose={() => setReporting(false)} />}
      {lightbox && (
        <Dialog title={lightbox.filename} onClose={() => setLightbox(null)}>
          <img className="lightbox-image" src={lightbox.url} alt={lightbox.description ?? lightbox.filename} />
          <p>
            <a href={lightbox.url} target="_blank" rel="noopener noreferrer">
              {t('chat.openOriginal')}
            </a>
          </p>
        </Dialog>
      )}
    </li>
  );
}

export const MessageItem = memo(Item);

function AttachmentView({ attachment, onOpen }: { attachment: Attachment; onOpen: () => void }) {
  const { t } = useTranslation();
  const image = attachment.content_type?.startsWith('image/');
  const video = attachment.content_type?.startsWith('video/');
  if (image) {
    const width = Math.min(attachment.width ?? 320, 320);
    const height =
      attachment.width && attachment.height ? Math.round((attachment.height * width) / attachment.width) : undefined;
    return (
      <button
        type="button"
        className="attachment-image"
        onClick={onOpen}
        aria-label={t('chat.viewImage', { name: attachment.filename })}
      >
        <img
          src={attachment.proxy_url ?? attachment.url}
          alt={attachment.description ?? attachment.filename}
          width={width}
          height={height}
          loading="lazy"
        />
      </button>
    );
  }
  if (video) {
    // biome-ignore lint/a11y/useMediaCaption: user uploads carry no caption track
    return <video className="attachment-video" src={attachment.url} controls preload="metadata" width={320} />;
  }
  return (
    <p className="attachment-file">
      <span aria-hidden="true">📄 </span>
      <a href={attachment.url} target="_blank" rel="noopener noreferrer" download={attachment.filename}>
        {attachment.filename}
      </a>{' '}
      <span className="hint">{formatBytes(attachment.size)}</span>
    </p>
  );
}

function EditBox({
  initial,
  onSave,
  onCancel,
}: {
  initial: string;
  onSave: (content: string) => void;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const [value, setValue] = useState(initial);
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      onCancel();
    } else if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      if (value.trim()) onSave(value);
    }
  };
  return (
    <div className="edit-box">
      <textarea
        aria-label={t('chat.editMessage')}
        value={value}
        // biome-ignore lint/a11y/noAutofocus: editing starts where the person asked for it
        autoFocus
        onFocus={(e) => e.currentTarget.setSelectionRange(e.currentTarget.value.length, e.currentTarget.value.length)}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={onKeyDown}
        rows={Math.min(8, value.split('\n').length + 1)}
      />
      <p className="hint">{t('chat.editHint')}</p>
    </div>
  );
}
