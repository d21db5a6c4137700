import { type KeyboardEvent, type RefObject, useEffect, useId, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Emoji } from '../../api/chat-types.ts';
import { EMOJI_CATEGORIES, standardEmojis } from './emoji-data.ts';

/** What the picker hands back: a standard emoji (its character) or one of the guild's own. */
export type PickedEmoji =
  | { kind: 'standard'; name: string; char: string }
  | { kind: 'custom'; id: string; name: string; animated: boolean };

/** The text a message carries for it: the character, or `<:name:id>` (`<a:name:id>` when animated). */
export function emojiText(emoji: PickedEmoji): string {
  return emoji.kind === 'standard' ? emoji.char : `<${emoji.animated ? 'a' : ''}:${emoji.name}:${emoji.id}>`;
}

/** The reaction route's form: the character, or `name:id`. */
export function reactionKey(emoji: PickedEmoji): string {
  return emoji.kind === 'standard' ? emoji.char : `${emoji.name}:${emoji.id}`;
}

export const emojiUrl = (id: string, animated?: boolean) => `/media/emojis/${id}.${animated ? 'gif' : 'png'}`;

interface Section {
  key: string;
  title: string;
  items: PickedEmoji[];
}

/** Emojis per row: Up and Down move by a row within a section, and across into the next or previous one. */
const COLUMNS = 8;

function move(sections: Section[], active: number, key: string): number {
  const total = sections.reduce((n, s) => n + s.items.length, 0);
  if (total === 0) return -1;
  if (active < 0) return 0;
  if (key === 'ArrowRight') return Math.min(active + 1, total - 1);
  if (key === 'ArrowLeft') return Math.max(active - 1, 0);
  if (key === 'Home') return 0;
  if (key === 'End') return total - 1;
  // Find the section and the place in it.
  let start = 0;
  let index = 0;
  while (index < sections.length && active >= start + (sections[index]?.items.length ?? 0)) {
    start += sections[index]?.items.length ?? 0;
    index++;
  }
  const section = sections[index];
  if (!section) return active;
  const at = active - start;
  const column = at % COLUMNS;
  const rows = Math.ceil(section.items.length / COLUMNS);
  const row = Math.floor(at / COLUMNS);
  if (key === 'ArrowDown') {
    if (row + 1 < rows) return start + Math.min(at + COLUMNS, section.items.length - 1);
    const next = sections[index + 1];
    if (!next) return active;
    return start + section.items.length + Math.min(column, next.items.length - 1);
  }
  if (key === 'ArrowUp') {
    if (row > 0) return start + at - COLUMNS;
    const previous = sections[index - 1];
    if (!previous) return active;
    const lastRow = Math.floor((previous.items.length - 1) / COLUMNS);
    return start - previous.items.length + Math.min(lastRow * COLUMNS + column, previous.items.length - 1);
  }
  return active;
}

/**
 * The emoji picker: a non-modal dialog with "Find emoji" (which keeps the focus: arrow keys move through
 * the emojis, Enter picks, Escape closes), category buttons, the guild's own emojis first, then the standard
 * ones by category. The options form one listbox the search field points at (`aria-activedescendant`).
 */
export function EmojiPicker({
  custom,
  customTitle,
  onPick,
  onClose,
  anchor,
  className = '',
}: {
  custom: Emoji[];
  customTitle: string;
  onPick: (emoji: PickedEmoji) => void;
  onClose: () => void;
  /** The button that opened the picker: a click on it is its own (toggle), not an outside click. */
  anchor?: RefObject<HTMLElement | null>;
  className?: string;
}) {
  const { t } = useTranslation();
  const id = useId();
  const root = useRef<HTMLDivElement>(null);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);

  const all = useMemo(() => {
    const customs: PickedEmoji[] = custom
      .filter((e): e is Emoji & { id: string } => !!e.id)
      .map((e) => ({ kind: 'custom', id: e.id, name: e.name, animated: !!e.animated }));
    const standard = standardEmojis();
    const sections: Section[] = [];
    if (customs.length > 0) sections.push({ key: 'custom', title: customTitle, items: customs });
    for (const category of EMOJI_CATEGORIES) {
      sections.push({
        key: category,
        title: t(`emoji.category.${category}`),
        items: standard
          .filter((e) => e.category === category)
          .map((e): PickedEmoji => ({ kind: 'standard', name: e.name, char: e.char })),
      });
    }
    return sections;
  }, [custom, customTitle, t]);

  const wanted = query.trim().replaceAll(':', '').toLowerCase();
  const sections: Section[] = useMemo(() => {
    if (!wanted) return all;
    const items = all.flatMap((s) => s.items).filter((e) => e.name.toLowerCase().includes(wanted));
    // Names that start with the query first, then the others, each in picker order.
    items.sort(
      (a, b) => Number(!a.name.toLowerCase().startsWith(wanted)) - Number(!b.name.toLowerCase().startsWith(wanted)),
    );
    return items.length > 0 ? [{ key: 'results', title: t('emoji.results'), items }] : [];
  }, [all, wanted, t]);
  const flat = sections.flatMap((s) => s.items);
  const current = flat[active];
  const optionId = (index: number) => `${id}-o${index}`;

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new query starts at its first result
  useEffect(() => {
    setActive(0);
  }, [wanted]);

  useEffect(() => {
    document.getElementById(optionId(active))?.scrollIntoView({ block: 'nearest' });
  });

  useEffect(() => {
    root.current?.scrollIntoView({ block: 'nearest' });
    const outside = (event: MouseEvent) => {
      const target = event.target as Node;
      if (root.current?.contains(target) || anchor?.current?.contains(target)) return;
      onClose();
    };
    document.addEventListener('mousedown', outside);
    return () => document.removeEventListener('mousedown', outside);
  }, [onClose, anchor]);

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (['ArrowDown', 'ArrowUp', 'ArrowLeft', 'ArrowRight'].includes(event.key)) {
      // Left and Right stay with the text while there is text to move in.
      if (
        (event.key === 'ArrowLeft' || event.key === 'ArrowRight') &&
        query &&
        event.currentTarget.selectionStart !== null
      ) {
        const input = event.currentTarget;
        const atEnd = input.selectionStart === query.length && input.selectionEnd === query.length;
        if (!atEnd) return;
      }
      event.preventDefault();
      setActive(move(sections, active, event.key));
    } else if (event.key === 'Enter') {
      event.preventDefault();
      if (current) onPick(current);
    }
  };

  let index = -1;
  return (
    <div
      ref={root}
      role="dialog"
      aria-label={t('emoji.picker')}
      className={`emoji-picker ${className}`}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          event.stopPropagation();
          onClose();
        }
      }}
    >
      <input
        type="search"
        className="emoji-search"
        aria-label={t('emoji.search')}
        placeholder={t('emoji.search')}
        value={query}
        // biome-ignore lint/a11y/noAutofocus: the picker was opened to type or choose at once
        autoFocus
        aria-controls={`${id}-list`}
        aria-autocomplete="list"
        aria-activedescendant={current ? optionId(active) : undefined}
        onChange={(event) => setQuery(event.target.value)}
        onKeyDown={onKeyDown}
      />
      {!wanted && (
        <fieldset className="emoji-categories">
          <legend className="visually-hidden">{t('emoji.categories')}</legend>
          {all.map((section, at) => {
            const first = all.slice(0, at).reduce((n, s) => n + s.items.length, 0);
            const sample = section.items[0];
            return (
              <button
                key={section.key}
                type="button"
                className="ghost icon"
                aria-label={section.title}
                title={section.title}
                onClick={() => {
                  setActive(first);
                  document.getElementById(`${id}-${section.key}`)?.scrollIntoView({ block: 'start' });
                  root.current?.querySelector('input')?.focus();
                }}
              >
                {sample?.kind === 'custom' ? (
                  <img className="emoji" src={emojiUrl(sample.id, sample.animated)} alt="" width={18} height={18} />
                ) : (
                  <span aria-hidden="true">{sample?.char}</span>
                )}
              </button>
            );
          })}
        </fieldset>
      )}
      <div id={`${id}-list`} className="emoji-list" role="listbox" aria-label={t('emoji.list')}>
        {sections.map((section) => (
          // biome-ignore lint/a11y/useSemanticElements: a group of options inside a listbox, not of form fields
          <div key={section.key} role="group" aria-labelledby={`${id}-${section.key}`}>
            <div id={`${id}-${section.key}`} className="emoji-section-title">
              {section.title}
            </div>
            <div className="emoji-grid">
              {section.items.map((emoji) => {
                index++;
                const at = index;
                return (
                  <div
                    key={emoji.kind === 'custom' ? emoji.id : emoji.name}
                    id={optionId(at)}
                    role="option"
                    tabIndex={-1}
                    aria-selected={at === active}
                    aria-label={`:${emoji.name}:`}
                    title={`:${emoji.name}:`}
                    className="emoji-option"
                    onMouseEnter={() => setActive(at)}
                    // On mouse down: the search field keeps the focus (and its caret) through the pick.
                    onMouseDown={(event) => {
                      event.preventDefault();
                      onPick(emoji);
                    }}
                  >
                    {emoji.kind === 'custom' ? (
                      <img className="emoji" src={emojiUrl(emoji.id, emoji.animated)} alt="" width={24} height={24} />
                    ) : (
                      emoji.char
                    )}
                  </div>
                );
              })}
            </div>
          </div>
        ))}
      </div>
      {sections.length === 0 && <p className="emoji-none">{t('emoji.none', { query: query.trim() })}</p>}
      <p className="emoji-preview" aria-hidden="true">
        {current && (
          <>
            {current.kind === 'custom' ? (
              <img className="emoji" src={emojiUrl(current.id, current.animated)} alt="" width={28} height={28} />
            ) : (
              <span className="emoji-preview-char">{current.char}</span>
            )}{' '}
            :{current.name}:
          </>
        )}
      </p>
    </div>
  );
}
