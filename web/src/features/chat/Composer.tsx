import {
  type ClipboardEvent,
  type DragEvent,
  type KeyboardEvent,
  useCallback,
  useEffect,
  useId,
  useRef,
  useState,
} from 'react';
import { useTranslation } from 'react-i18next';
import type { Channel, Message } from '../../api/chat-types.ts';
import { Avatar } from '../../components/Avatar.tsx';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import type { ImageSource } from '../../lib/media.ts';
import { pushToTalkKeyInUse } from '../voice/call.ts';
import { useChat } from './context.ts';
import { EmojiPicker, emojiText } from './EmojiPicker.tsx';
import { EMOJI, resolveShortcodes } from './emoji.ts';
import { type CommandEntry, CommandForm, commandEntries } from './SlashCommand.tsx';

const TYPING_EVERY_MS = 8000;

interface Suggestion {
  id: string;
  label: string;
  insert: string;
  /** A slash command: choosing it opens its options instead of inserting text. */
  command?: CommandEntry;
  /** A person: their picture beside the label (whose name it repeats). */
  person?: { source: ImageSource | null; name: string };
}

/**
 * The message box: Enter sends, Shift+Enter is a new line, Up on an empty box edits the last own message,
 * Escape cancels a reply and marks the channel read; files by picker, drag and drop or paste;
 * `@` completes members (and @everyone), `#` channels; `/` at the start lists the slash commands the person
 * may use here (the channel's application command index), whose options then open as a form.
 */
export function Composer({
  channel,
  label,
  replyTo,
  clearReply,
  onEditLast,
  canAttach,
}: {
  channel: Channel;
  label: string;
  replyTo: Message | null;
  clearReply: () => void;
  onEditLast: () => void;
  canAttach: boolean;
}) {
  const { t } = useTranslation();
  const store = useChat();
  const [text, setText] = useState(() => sessionStorage.getItem(`hearth.draft.${channel.id}`) ?? '');
  const [files, setFiles] = useState<File[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [dragging, setDragging] = useState(false);
  const [selected, setSelected] = useState(0);
  const [caret, setCaret] = useState(0);
  const box = useRef<HTMLTextAreaElement>(null);
  const fileInputId = useId();
  const lastTyping = useRef(0);
  const [commands, setCommands] = useState<{ channelId: string; entries: CommandEntry[] } | null>(null);
  const [chosen, setChosen] = useState<CommandEntry | null>(null);
  const [emojiOpen, setEmojiOpen] = useState(false);
  const emojiButton = useRef<HTMLButtonElement>(null);
  const guild = channel.guild_id ? store.guilds.get(channel.guild_id) : undefined;
  const wantsCommands = text.startsWith('/');

  // The command index is fetched when `/` is first typed in a channel (and again in another channel).
  useEffect(() => {
    if (!wantsCommands || commands?.channelId === channel.id) return;
    let live = true;
    store.api
      .commandIndex(channel.id)
      .then((index) => {
        if (live) setCommands({ channelId: channel.id, entries: commandEntries(index) });
      })
      .catch(() => {
        if (live) setCommands({ channelId: channel.id, entries: [] });
      });
    return () => {
      live = false;
    };
  }, [wantsCommands, commands, channel.id, store]);

  useEffect(() => {
    sessionStorage.setItem(`hearth.draft.${channel.id}`, text);
  }, [text, channel.id]);

  useEffect(() => {
    if (replyTo) box.current?.focus();
  }, [replyTo]);

  // Typing with the focus on nothing in particular (the page, a message, a channel link) writes here, as in the
  // clients people know: the box takes the focus in the keydown, so the character lands in it. Not from another
  // field, a list or menu with its own keys, an open dialog, or a shortcut with Ctrl/Alt/Meta; not Space (it scrolls),
  // nor a call's push-to-talk key.
  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
      if (event.key.length !== 1 || event.key === ' ') return;
      // Holding the push-to-talk key of a call talks; it must not type into the message box.
      if (event.code === pushToTalkKeyInUse()) return;
      const target = event.target instanceof Element ? event.target : null;
      const own =
        'input, textarea, select, [contenteditable=""], [contenteditable="true"], dialog, [role="dialog"], ' +
        '[role="listbox"], [role="menu"], [role="menubar"], [role="grid"], [role="tree"], [role="tablist"], [role="combobox"]';
      if (target?.closest(own) || document.querySelector('dialog[open], .chat[data-nav-open="true"]')) return;
      const el = box.current;
      if (el && el.offsetParent !== null) el.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);

  // Drag and drop anywhere on the channel view.
  useEffect(() => {
    if (!canAttach) return;
    const view = box.current?.closest('.channel-view');
    if (!view) return;
    const over = (event: Event) => {
      const e = event as unknown as DragEvent;
      if (e.dataTransfer?.types.includes('Files')) {
        e.preventDefault();
        setDragging(true);
      }
    };
    const leave = () => setDragging(false);
    const drop = (event: Event) => {
      const e = event as unknown as DragEvent;
      if (!e.dataTransfer?.files.length) return;
      e.preventDefault();
      setDragging(false);
      setFiles((current) => [...current, ...Array.from(e.dataTransfer.files)].slice(0, 10));
    };
    view.addEventListener('dragover', over);
    view.addEventListener('dragleave', leave);
    view.addEventListener('drop', drop);
    return () => {
      view.removeEventListener('dragover', over);
      view.removeEventListener('dragleave', leave);
      view.removeEventListener('drop', drop);
    };
  }, [canAttach]);

  const slash = /^\/([\w' -]{0,64})$/u.exec(text.slice(0, caret));
  const suggestions: Suggestion[] = slash
    ? (commands?.channelId === channel.id ? commands.entries : [])
        .filter((e) => e.label.startsWith((slash[1] ?? '').toLowerCase()))
        .slice(0, 10)
        .map((e) => ({ id: e.key, label: `${e.label} — ${e.description}`, insert: '', command: e }))
    : suggest(store, channel, text.slice(0, caret));

  const send = () => {
    const content = resolveShortcodes(text.trim(), guild?.guild.emojis ?? []);
    if (!content && files.length === 0) return;
    const reply = replyTo?.id;
    const sending = files;
    setText('');
    setFiles([]);
    // The server ends the typing indicator with the message; the next keystroke starts a new one.
    lastTyping.current = 0;
    clearReply();
    setError(null);
    store.send(channel.id, content, { replyTo: reply, files: sending }).catch((caught: unknown) => setError(caught));
  };

  const complete = (choice: Suggestion) => {
    if (choice.command) {
      setChosen(choice.command);
      setText('');
      setSelected(0);
      return;
    }
    const before = text.slice(0, caret).replace(/(?:[@#][\w.-]*|:[\w+-]*)$/, choice.insert);
    const next = `${before} ${text.slice(caret)}`;
    setText(next);
    setSelected(0);
    const position = before.length + 1;
    setCaret(position);
    window.requestAnimationFrame(() => placeCaret(box.current, next, position));
  };

  const closeEmoji = useCallback(() => {
    setEmojiOpen(false);
    window.requestAnimationFrame(() => box.current?.focus());
  }, []);

  /** Puts text where the caret was (replacing a selection) and gives the box its focus back. */
  const insertAtCaret = (value: string) => {
    const el = box.current;
    const start = el?.selectionStart ?? text.length;
    const end = el?.selectionEnd ?? start;
    const next = `${text.slice(0, start)}${value}${text.slice(end)}`.slice(0, 2000);
    const position = Math.min(start + value.length, next.length);
    setText(next);
    setCaret(position);
    window.requestAnimationFrame(() => {
      box.current?.focus();
      placeCaret(box.current, next, position);
    });
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (suggestions.length > 0) {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        const step = event.key === 'ArrowDown' ? 1 : -1;
        setSelected((selected + step + suggestions.length) % suggestions.length);
        return;
      }
      if (event.key === 'Enter' || event.key === 'Tab') {
        event.preventDefault();
        complete(suggestions[selected] ?? (suggestions[0] as Suggestion));
        return;
      }
    }
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    } else if (event.key === 'ArrowUp' && text === '' && !event.altKey) {
      event.preventDefault();
      onEditLast();
    } else if (event.key === 'Escape') {
      if (replyTo) clearReply();
      else store.markRead(channel.id);
    }
  };

  const onChange = (value: string, position: number) => {
    setText(value);
    setCaret(position);
    setSelected(0);
    const now = Date.now();
    if (value && now - lastTyping.current > TYPING_EVERY_MS) {
      lastTyping.current = now;
      void store.api.typing(channel.id).catch(() => undefined);
    }
  };

  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    if (!canAttach || event.clipboardData.files.length === 0) return;
    event.preventDefault();
    setFiles((current) => [...current, ...Array.from(event.clipboardData.files)].slice(0, 10));
  };

  const listId = `composer-suggestions-${channel.id}`;
  return (
    <div className={`composer${dragging ? ' dragging' : ''}`}>
      {replyTo && (
        <div className="replying">
          <span>{t('chat.replyingTo', { name: store.displayName(replyTo.author.id, channel.guild_id) })}</span>
          <button type="button" className="ghost small" onClick={clearReply}>
            {t('chat.cancelReply')}
          </button>
        </div>
      )}
      {files.length > 0 && (
        <ul className="file-chips" aria-label={t('chat.filesToSend')}>
          {files.map((file, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: two files may share a name
            <li key={`${file.name}-${index}`}>
              {file.name}
              <button
                type="button"
                className="ghost icon"
                aria-label={t('chat.removeFile', { name: file.name })}
                onClick={() => setFiles(files.filter((_, i) => i !== index))}
              >
                ✕
              </button>
            </li>
          ))}
        </ul>
      )}
      {dragging && <p className="drop-hint">{t('chat.dropHere', { name: label })}</p>}
      {suggestions.length > 0 && (
        <div
          id={listId}
          className="suggestions"
          role="listbox"
          aria-label={slash ? t('chat.commands') : t('chat.suggestions')}
        >
          {suggestions.map((s, index) => (
            <div
              key={s.id}
              tabIndex={-1}
              id={`${listId}-${index}`}
              role="option"
              aria-selected={index === selected}
              onMouseDown={(event) => {
                event.preventDefault();
                complete(s);
              }}
            >
              {s.person && <Avatar source={s.person.source} name={s.person.name} size={20} />}
              {s.label}
            </div>
          ))}
        </div>
      )}
      {chosen ? (
        <CommandForm
          key={chosen.key}
          entry={chosen}
          channel={channel}
          onDone={() => {
            setChosen(null);
            window.requestAnimationFrame(() => box.current?.focus());
          }}
        />
      ) : (
        <div className="composer-row">
          {canAttach && (
            <>
              {/* One control, the file input itself (named by its label, drawn as the "+" button and laid
                  transparent over it, so a click anywhere on it is a click on the input): a label search or a
                  button search finds the input, where a file can be set (docs/web.md#accessibility). */}
              <span className="upload-control">
                <input
                  id={fileInputId}
                  type="file"
                  multiple
                  onChange={(event) => {
                    const chosen = Array.from(event.target.files ?? []);
                    setFiles((current) => [...current, ...chosen].slice(0, 10));
                    event.target.value = '';
                  }}
                />
                <label htmlFor={fileInputId} title={t('chat.uploadFile')}>
                  <span aria-hidden="true">+</span>
                  <span className="visually-hidden">{t('chat.uploadFile')}</span>
                </label>
              </span>
            </>
          )}
          <textarea
            ref={box}
            className="composer-input"
            aria-label={label}
            placeholder={label}
            value={text}
            rows={Math.min(10, text.split('\n').length)}
            maxLength={2000}
            // A textbox (what assistive technology and people expect of a message field) that announces its
            // suggestions: aria-controls and aria-activedescendant point at the list while it is open.
            aria-controls={suggestions.length > 0 ? listId : undefined}
            aria-autocomplete="list"
            aria-activedescendant={suggestions.length > 0 ? `${listId}-${selected}` : undefined}
            onChange={(event) => onChange(event.target.value, event.target.selectionStart)}
            onSelect={(event) => setCaret(event.currentTarget.selectionStart)}
            onKeyDown={onKeyDown}
            onPaste={onPaste}
          />
          <button
            ref={emojiButton}
            type="button"
            className="ghost icon"
            aria-label={t('emoji.button')}
            title={t('emoji.button')}
            aria-expanded={emojiOpen}
            aria-haspopup="dialog"
            onClick={() => setEmojiOpen(!emojiOpen)}
          >
            <span aria-hidden="true">🙂</span>
          </button>
          <button type="button" className="primary small" onClick={send} disabled={!text.trim() && files.length === 0}>
            {t('chat.send')}
          </button>
        </div>
      )}
      {emojiOpen && (
        <EmojiPicker
          className="above"
          custom={guild?.guild.emojis ?? []}
          customTitle={t('emoji.custom', { name: guild?.guild.name ?? '' })}
          anchor={emojiButton}
          onPick={(emoji) => {
            setEmojiOpen(false);
            insertAtCaret(emojiText(emoji));
          }}
          onClose={closeEmoji}
        />
      )}
      <ErrorNotice error={error} />
    </div>
  );
}

/**
 * Puts the caret after what a completion or the emoji picker inserted, on the frame after React wrote it. Only if
 * nothing happened meanwhile: under load the frame can come after the next keys (moving the caret back would scatter
 * them) or after a selection (Ctrl+A then Delete would delete nothing).
 */
function placeCaret(box: HTMLTextAreaElement | null, written: string, position: number): void {
  if (!box || box.value !== written || box.selectionStart !== box.selectionEnd) return;
  box.setSelectionRange(position, position);
}

function suggest(store: ReturnType<typeof useChat>, channel: Channel, before: string): Suggestion[] {
  const mention = /(?:^|\s)@([\w.-]{0,32})$/.exec(before);
  if (mention) {
    const query = (mention[1] ?? '').toLowerCase();
    const out: Suggestion[] = [];
    const guild = channel.guild_id ? store.guilds.get(channel.guild_id) : undefined;
    const candidates = guild
      ? [...guild.members.values()].map((m) => m.user).filter((u) => !!u)
      : (channel.recipients ?? []);
    for (const user of candidates) {
      if (!user) continue;
      const name = store.displayName(user.id, channel.guild_id);
      if (user.username.toLowerCase().startsWith(query) || name.toLowerCase().startsWith(query)) {
        out.push({
          id: user.id,
          label: `${name} (@${user.username})`,
          insert: `<@${user.id}>`,
          person: { source: store.avatarOf(user.id, channel.guild_id), name },
        });
      }
      if (out.length >= 8) break;
    }
    if (guild) {
      for (const role of guild.roles.values()) {
        if (role.id !== guild.guild.id && role.mentionable && role.name.toLowerCase().startsWith(query))
          out.push({ id: `r${role.id}`, label: `@${role.name}`, insert: `<@&${role.id}>` });
      }
      for (const word of ['everyone', 'here']) {
        if (word.startsWith(query)) out.push({ id: word, label: `@${word}`, insert: `@${word}` });
      }
    }
    return out.slice(0, 10);
  }
  const shortcode = /(?:^|\s):([\w+-]{2,32})$/.exec(before);
  if (shortcode) {
    const query = (shortcode[1] ?? '').toLowerCase();
    const own = (channel.guild_id ? (store.guilds.get(channel.guild_id)?.guild.emojis ?? []) : [])
      .filter((e) => e.id && e.name.toLowerCase().startsWith(query))
      .slice(0, 4)
      .map((e) => ({
        id: `c${e.id}`,
        label: `:${e.name}:`,
        insert: `<${e.animated ? 'a' : ''}:${e.name}:${e.id}>`,
      }));
    return own.concat(
      EMOJI.filter(([name]) => name.startsWith(query))
        .slice(0, 8 - own.length)
        .map(([name, char]) => ({ id: `e${name}`, label: `${char} :${name}:`, insert: char })),
    );
  }
  const hash = /(?:^|\s)#([\w-]{0,32})$/.exec(before);
  if (hash && channel.guild_id) {
    const query = (hash[1] ?? '').toLowerCase();
    return store
      .guildChannels(channel.guild_id)
      .filter((c) => c.type === 0 && (c.name ?? '').toLowerCase().startsWith(query))
      .slice(0, 8)
      .map((c) => ({ id: c.id, label: `#${c.name}`, insert: `<#${c.id}>` }));
  }
  return [];
}
