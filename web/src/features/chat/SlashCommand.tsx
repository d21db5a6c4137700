import { type FormEvent, type KeyboardEvent, type ReactElement, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ApplicationCommand, Channel, CommandChoice, CommandIndex, CommandOption } from '../../api/chat-types.ts';
import { ErrorNotice } from '../../components/ErrorNotice.tsx';
import { useChat } from './context.ts';

const SUB_COMMAND = 1;
const SUB_COMMAND_GROUP = 2;
const STRING = 3;
const INTEGER = 4;
const BOOLEAN = 5;
const USER = 6;
const CHANNEL = 7;
const ROLE = 8;
const MENTIONABLE = 9;
const NUMBER = 10;
const ATTACHMENT = 11;
const CATEGORY = 4;
/** The option types the picker can fill in (all of Discord's); a command needing another kind is not offered. */
const SUPPORTED = new Set([STRING, INTEGER, BOOLEAN, USER, CHANNEL, ROLE, MENTIONABLE, NUMBER, ATTACHMENT]);
/** How long typing pauses before the bot is asked for suggestions. */
const AUTOCOMPLETE_DELAY_MS = 250;

/** One invocable slash command: a chat-input command, or one of its subcommands ("config set"). */
export interface CommandEntry {
  key: string;
  /** What is typed after `/`: the command's name, then the subcommand group's and subcommand's. */
  label: string;
  description: string;
  command: ApplicationCommand;
  path: string[];
  options: CommandOption[];
  application: string;
}

/** The slash commands of an index, subcommands spelled out, in name order. */
export function commandEntries(index: CommandIndex): CommandEntry[] {
  const apps = new Map(index.applications.map((a) => [a.id, a.name]));
  const out: CommandEntry[] = [];
  const walk = (command: ApplicationCommand, path: string[], description: string, options: CommandOption[]) => {
    const nested = options.filter((o) => o.type === SUB_COMMAND || o.type === SUB_COMMAND_GROUP);
    if (nested.length > 0) {
      for (const o of nested) walk(command, [...path, o.name], o.description, o.options ?? []);
      return;
    }
    if (options.some((o) => !SUPPORTED.has(o.type) && o.required)) return;
    out.push({
      key: `${command.id}:${path.join(' ')}`,
      label: [command.name, ...path].join(' '),
      description,
      command,
      path,
      options: options.filter((o) => SUPPORTED.has(o.type)),
      application: apps.get(command.application_id) ?? '',
    });
  };
  for (const c of index.application_commands) if (c.type === 1) walk(c, [], c.description, c.options ?? []);
  return out.sort((a, b) => a.label.localeCompare(b.label));
}

/**
 * A chosen slash command's options as labelled fields (name as the label, description as the hint; required
 * ones marked and enforced, numbers kept within `min_value`/`max_value`, text within `min_length`/`max_length`).
 * Users, channels (of the option's `channel_types`), roles and mentionables (members and roles) are chosen from
 * lists, attachments with a file picker, `choices` from a list; an `autocomplete` option is a combobox whose
 * suggestions the bot sends while the person types (an interaction of type 4 answered by type 8). Enter in a
 * field (or "Send") invokes the command through `POST /interactions` (multipart when it carries files);
 * Escape or "Cancel" goes back to the message box.
 */
export function CommandForm({
  entry,
  channel,
  onDone,
}: {
  entry: CommandEntry;
  channel: Channel;
  onDone: (sent: boolean) => void;
}) {
  const { t, i18n } = useTranslation();
  const store = useChat();
  /** What is sent for each option, as text (a choice's value, an id, a number as typed). */
  const [values, setValues] = useState<Record<string, string>>({});
  /** What an autocomplete field shows (the text typed, or the name of the suggestion taken). */
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [files, setFiles] = useState<Record<string, File>>({});
  const [error, setError] = useState<unknown>(null);
  const [problem, setProblem] = useState<{ name: string; message: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<number | null>(null);
  /** The autocomplete request whose answer is shown, and under which field. */
  const [suggesting, setSuggesting] = useState<{ name: string; nonce: string } | null>(null);
  const [active, setActive] = useState(-1);
  const first = useRef<HTMLElement | null>(null);
  const sendButton = useRef<HTMLButtonElement>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  useEffect(() => {
    (first.current ?? sendButton.current)?.focus();
    return () => clearTimeout(timer.current);
  }, []);

  const fieldId = (name: string) => `command-${channel.id}-${name}`;
  const guild = channel.guild_id ? store.guilds.get(channel.guild_id) : undefined;
  const people = guild
    ? [...guild.members.values()].flatMap((m) => (m.user ? [m.user] : []))
    : (channel.recipients ?? []);
  const roles = guild ? [...guild.roles.values()].sort((a, b) => b.position - a.position) : [];
  const roleLabel = (name: string) => (name.startsWith('@') ? name : `@${name}`);
  const channelsFor = (option: CommandOption) =>
    channel.guild_id
      ? store
          .guildChannels(channel.guild_id)
          .filter((c) => (option.channel_types?.length ? option.channel_types.includes(c.type) : c.type !== CATEGORY))
      : [channel];
  const choiceName = (c: CommandChoice) =>
    c.name_localizations?.[i18n.language] ?? c.name_localizations?.[i18n.language.split('-')[0] ?? ''] ?? c.name;
  const suggestions = suggesting ? store.autocompleteChoices.get(suggesting.nonce) : undefined;

  const present = (o: CommandOption) => (values[o.name] ?? '') !== '';
  /** `data.options` (wrapped in the subcommand and its group): `focus` is the option being autocompleted. */
  const optionData = (focus?: { name: string; text: string }) => {
    const options = entry.options
      .filter((o) => o.name === focus?.name || (present(o) && (!focus || o.type !== ATTACHMENT)))
      .map((o) => {
        if (o.name === focus?.name) return { name: o.name, type: o.type, value: focus.text, focused: true };
        const value = o.type === ATTACHMENT ? Object.keys(files).indexOf(o.name) : optionValue(o, values[o.name] ?? '');
        return { name: o.name, type: o.type, value };
      });
    let data: unknown[] = options;
    entry.path.forEach((_, i) => {
      const depth = entry.path.length - 1 - i;
      data = [{ name: entry.path[depth], type: i === 0 ? SUB_COMMAND : SUB_COMMAND_GROUP, options: data }];
    });
    return data;
  };
  const interaction = (type: 2 | 4, options: unknown[], nonce: string) => ({
    type,
    nonce,
    application_id: entry.command.application_id,
    guild_id: channel.guild_id,
    channel_id: channel.id,
    data: {
      id: entry.command.id,
      name: entry.command.name,
      type: 1,
      ...(type === 2 ? { version: entry.command.version } : {}),
      options,
    },
  });

  /** Asks the bot for suggestions for `option` given `text` (the answer arrives over the gateway). */
  const suggest = (option: CommandOption, text: string) => {
    const nonce = newNonce();
    setSuggesting({ name: option.name, nonce });
    setActive(-1);
    store.api.interact(interaction(4, optionData({ name: option.name, text }), nonce)).catch(() => {
      // No suggestions then: the field still takes what is typed.
    });
  };

  /** The first thing wrong with what was filled in, as the sentence to show under its field. */
  const check = (): { name: string; message: string } | null => {
    for (const o of entry.options) {
      const raw = values[o.name] ?? '';
      if (raw === '') {
        if (o.required) return { name: o.name, message: t('chat.commandMissing', { name: o.name }) };
        continue;
      }
      if (o.type === INTEGER || o.type === NUMBER) {
        const n = Number(raw);
        if (!Number.isFinite(n)) return { name: o.name, message: t('chat.commandNumber', { name: o.name }) };
        if (o.type === INTEGER && !Number.isInteger(n))
          return { name: o.name, message: t('chat.commandWhole', { name: o.name }) };
        if (o.min_value !== undefined && n < o.min_value)
          return { name: o.name, message: t('chat.commandAtLeast', { name: o.name, min: o.min_value }) };
        if (o.max_value !== undefined && n > o.max_value)
          return { name: o.name, message: t('chat.commandAtMost', { name: o.name, max: o.max_value }) };
      }
      if (o.type === STRING && o.min_length !== undefined && [...raw].length < o.min_length)
        return { name: o.name, message: t('chat.commandTooShort', { name: o.name, min: o.min_length }) };
    }
    return null;
  };

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    const wrong = check();
    setProblem(wrong);
    if (wrong) {
      document.getElementById(fieldId(wrong.name))?.focus();
      return;
    }
    setSuggesting(null);
    setBusy(true);
    setError(null);
    try {
      const body = interaction(2, optionData(), newNonce());
      const attached = Object.values(files);
      if (attached.length > 0) {
        setProgress(0);
        await store.api.interactWithFiles(body, attached, (sent, total) =>
          setProgress(total > 0 ? Math.round((sent / total) * 100) : 0),
        );
      } else await store.api.interact(body);
      onDone(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
      setProgress(null);
    }
  };

  const take = (option: CommandOption, choice: CommandChoice) => {
    setValues({ ...values, [option.name]: String(choice.value) });
    setTexts({ ...texts, [option.name]: choiceName(choice) });
    setSuggesting(null);
    setActive(-1);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      if (suggesting) setSuggesting(null);
      else onDone(false);
    }
  };

  const set = (name: string, value: string) => setValues({ ...values, [name]: value });
  return (
    <form
      className="command-form"
      aria-label={t('chat.commandForm', { name: entry.label })}
      noValidate
      onSubmit={(event) => void submit(event)}
      onKeyDown={onKeyDown}
    >
      <div className="command-head">
        <span className="command-chip">/{entry.label}</span>
        <span className="hint">
          {entry.description}
          {entry.application ? ` · ${entry.application}` : ''}
        </span>
      </div>
      {entry.options.map((option, index) => {
        const id = fieldId(option.name);
        const hintId = `${id}-hint`;
        const ref = (element: HTMLElement | null) => {
          if (index === 0) first.current = element;
        };
        const common = {
          id,
          'aria-describedby': hintId,
          'aria-required': option.required ? true : undefined,
          'aria-invalid': problem?.name === option.name ? true : undefined,
        };
        let control: ReactElement;
        let list: ReactElement | null = null;
        if (option.type === ATTACHMENT) {
          control = (
            <input
              ref={ref}
              {...common}
              type="file"
              onChange={(e) => {
                const file = e.target.files?.[0];
                const rest = Object.fromEntries(Object.entries(files).filter(([name]) => name !== option.name));
                setFiles(file ? { ...rest, [option.name]: file } : rest);
                set(option.name, file ? file.name : '');
              }}
            />
          );
        } else if (option.autocomplete) {
          const listId = `${id}-suggestions`;
          const open = suggesting?.name === option.name;
          const shown = open ? (suggestions ?? []) : [];
          const numeric = option.type === INTEGER || option.type === NUMBER;
          control = (
            <input
              ref={ref}
              {...common}
              type="text"
              inputMode={numeric ? 'decimal' : undefined}
              role="combobox"
              aria-autocomplete="list"
              aria-expanded={open && shown.length > 0}
              aria-controls={listId}
              aria-activedescendant={open && active >= 0 && active < shown.length ? `${listId}-${active}` : undefined}
              autoComplete="off"
              value={texts[option.name] ?? ''}
              maxLength={option.max_length ?? (numeric ? undefined : 6000)}
              onFocus={() => {
                if (!open) suggest(option, texts[option.name] ?? '');
              }}
              onBlur={() => setSuggesting((s) => (s?.name === option.name ? null : s))}
              onChange={(e) => {
                const text = e.target.value;
                setTexts({ ...texts, [option.name]: text });
                set(option.name, text);
                clearTimeout(timer.current);
                timer.current = setTimeout(() => suggest(option, text), AUTOCOMPLETE_DELAY_MS);
              }}
              onKeyDown={(e) => {
                if (!open || shown.length === 0) return;
                if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
                  e.preventDefault();
                  const step = e.key === 'ArrowDown' ? 1 : -1;
                  setActive((a) => (a + step + shown.length) % shown.length);
                } else if (e.key === 'Enter' && active >= 0 && shown[active]) {
                  e.preventDefault();
                  take(option, shown[active]);
                }
              }}
            />
          );
          list = (
            <div
              id={listId}
              role="listbox"
              className="command-suggestions"
              aria-label={t('chat.commandSuggestions', { name: option.name })}
              hidden={!open || shown.length === 0}
            >
              {shown.map((choice, i) => (
                <div
                  key={`${choice.value}`}
                  tabIndex={-1}
                  id={`${listId}-${i}`}
                  role="option"
                  aria-selected={i === active}
                  onMouseDown={(e) => {
                    // Taken on press, before the field loses focus (which closes the list).
                    e.preventDefault();
                    take(option, choice);
                  }}
                >
                  {choiceName(choice)}
                </div>
              ))}
            </div>
          );
        } else if (option.choices?.length || [BOOLEAN, USER, CHANNEL, ROLE, MENTIONABLE].includes(option.type)) {
          const members = people.map((u) => ({ value: u.id, label: store.displayName(u.id, channel.guild_id) }));
          const roleChoices = roles.map((r) => ({ value: r.id, label: roleLabel(r.name) }));
          const choices: { value: string; label: string }[] =
            option.type === BOOLEAN
              ? [
                  { value: 'true', label: t('chat.commandTrue') },
                  { value: 'false', label: t('chat.commandFalse') },
                ]
              : option.type === USER
                ? members
                : option.type === ROLE
                  ? roleChoices
                  : option.type === CHANNEL
                    ? channelsFor(option).map((c) => ({ value: c.id, label: `#${c.name ?? ''}` }))
                    : (option.choices ?? []).map((c) => ({ value: String(c.value), label: choiceName(c) }));
          const options = (items: { value: string; label: string }[]) =>
            items.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ));
          control = (
            <select
              ref={ref}
              {...common}
              value={values[option.name] ?? ''}
              onChange={(e) => set(option.name, e.target.value)}
            >
              <option value="">{t('chat.commandChoose')}</option>
              {option.type === MENTIONABLE ? (
                <>
                  <optgroup label={t('chat.commandMembers')}>{options(members)}</optgroup>
                  {roleChoices.length > 0 && <optgroup label={t('chat.commandRoles')}>{options(roleChoices)}</optgroup>}
                </>
              ) : (
                options(choices)
              )}
            </select>
          );
        } else {
          const numeric = option.type === INTEGER || option.type === NUMBER;
          control = (
            <input
              ref={ref}
              {...common}
              value={values[option.name] ?? ''}
              type={numeric ? 'number' : 'text'}
              step={option.type === INTEGER ? 1 : numeric ? 'any' : undefined}
              min={option.min_value}
              max={option.max_value}
              minLength={option.min_length}
              maxLength={option.max_length ?? (numeric ? undefined : 6000)}
              autoComplete="off"
              onChange={(e) => set(option.name, e.target.value)}
            />
          );
        }
        return (
          <div className="field command-option" key={option.name}>
            <label htmlFor={id}>
              {option.name}
              {option.required ? ` (${t('chat.commandRequired')})` : ''}
            </label>
            {control}
            {list}
            <span id={hintId} className="hint">
              {option.description}
            </span>
            {problem?.name === option.name && (
              <span role="alert" className="field-error">
                {problem.message}
              </span>
            )}
          </div>
        );
      })}
      {progress !== null && (
        <progress className="upload-progress" max={100} value={progress} aria-label={t('chat.commandUploading')} />
      )}
      <ErrorNotice error={error} />
      <div className="command-actions">
        <button type="button" className="ghost small" onClick={() => onDone(false)}>
          {t('chat.commandCancel')}
        </button>
        <button ref={sendButton} type="submit" className="primary small" disabled={busy} aria-busy={busy || undefined}>
          {t('chat.commandSend', { name: entry.label })}
        </button>
      </div>
    </form>
  );
}

function newNonce(): string {
  return `${Date.now()}${Math.floor(Math.random() * 1e6)}`.slice(0, 25);
}

/** The typed value of an option (ids, mentionables' too, stay strings). */
function optionValue(option: CommandOption, raw: string): string | number | boolean {
  if (option.type === BOOLEAN) return raw === 'true';
  if (option.type === INTEGER) return Number.parseInt(raw, 10);
  if (option.type === NUMBER) return Number(raw);
  return raw;
}
