import { Fragment, type ReactNode, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';

/**
 * The platform's markdown rendered as React elements (never HTML strings, so nothing in a message can become
 * markup): bold, italic, underline, strikethrough, spoilers, inline code, code blocks (Prism, loaded on
 * demand), quotes, headings, lists, masked and plain links (http/https only), mentions and custom emojis.
 */
export interface MarkdownContext {
  userName(id: string): string;
  roleName(id: string): string | undefined;
  channelName(id: string): string | undefined;
  onChannel?(id: string): void;
  me?: string;
  /** The word a hidden spoiler is read as in plainText ("Spoiler"). */
  spoiler?: string;
}

type Rule = {
  re: RegExp;
  render(match: RegExpExecArray, key: number, ctx: MarkdownContext): ReactNode;
  /** What a screen reader hears of it when the message is read as one line (plainText). */
  plain(match: RegExpExecArray, ctx: MarkdownContext): string;
};

function safeUrl(raw: string): string | null {
  try {
    const url = new URL(raw);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

function Spoiler({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  const [shown, setShown] = useState(false);
  if (shown) return <span className="spoiler shown">{children}</span>;
  // Hidden: a button named "Spoiler" (the text is kept from assistive technology until revealed).
  return (
    <button type="button" className="spoiler" onClick={() => setShown(true)}>
      <span className="visually-hidden">{t('chat.spoiler')}</span>
      <span aria-hidden="true">{children}</span>
    </button>
  );
}

const RULES: Rule[] = [
  { re: /\\([*_~`|\\<>[\]()#-])/y, render: (m) => m[1], plain: (m) => m[1] ?? '' },
  {
    re: /``([^`]+?)``|`([^`\n]+?)`/y,
    render: (m, key) => <code key={key}>{m[1] ?? m[2]}</code>,
    plain: (m) => m[1] ?? m[2] ?? '',
  },
  {
    re: /\|\|([\s\S]+?)\|\|/y,
    render: (m, key, ctx) => <Spoiler key={key}>{inline(m[1] ?? '', ctx)}</Spoiler>,
    // Kept hidden as on screen: the word, not the text.
    plain: (_m, ctx) => ctx.spoiler ?? '…',
  },
  {
    re: /\*\*([\s\S]+?)\*\*(?!\*)/y,
    render: (m, key, ctx) => <strong key={key}>{inline(m[1] ?? '', ctx)}</strong>,
    plain: (m, ctx) => plainInline(m[1] ?? '', ctx),
  },
  {
    re: /__([\s\S]+?)__(?!_)/y,
    render: (m, key, ctx) => <u key={key}>{inline(m[1] ?? '', ctx)}</u>,
    plain: (m, ctx) => plainInline(m[1] ?? '', ctx),
  },
  {
    re: /~~([\s\S]+?)~~/y,
    render: (m, key, ctx) => <s key={key}>{inline(m[1] ?? '', ctx)}</s>,
    plain: (m, ctx) => plainInline(m[1] ?? '', ctx),
  },
  {
    re: /\*([^\s*](?:[\s\S]*?[^\s*])?)\*(?!\*)/y,
    render: (m, key, ctx) => <em key={key}>{inline(m[1] ?? '', ctx)}</em>,
    plain: (m, ctx) => plainInline(m[1] ?? '', ctx),
  },
  {
    re: /_([^\s_](?:[\s\S]*?[^\s_])?)_(?![A-Za-z0-9_])/y,
    render: (m, key, ctx) => <em key={key}>{inline(m[1] ?? '', ctx)}</em>,
    plain: (m, ctx) => plainInline(m[1] ?? '', ctx),
  },
  {
    re: /\[([^\]\n]+)\]\(<?(https?:\/\/[^)\s>]+)>?\)/y,
    render: (m, key, ctx) => {
      const href = safeUrl(m[2] ?? '');
      if (!href) return m[0];
      return (
        <a key={key} href={href} target="_blank" rel="noopener noreferrer nofollow" title={href}>
          {inline(m[1] ?? '', ctx)}
        </a>
      );
    },
    plain: (m, ctx) => plainInline(m[1] ?? '', ctx),
  },
  {
    re: /<?(https?:\/\/[^\s<>]*[^\s<>.,:;"')\]!?])>?/y,
    render: (m, key) => {
      const href = safeUrl(m[1] ?? '');
      if (!href) return m[0];
      return (
        <a key={key} href={href} target="_blank" rel="noopener noreferrer nofollow">
          {m[1]}
        </a>
      );
    },
    plain: (m) => m[1] ?? '',
  },
  {
    re: /<@!?(\d{1,20})>/y,
    render: (m, key, ctx) => (
      <span key={key} className={m[1] === ctx.me ? 'mention me' : 'mention'}>
        @{ctx.userName(m[1] ?? '')}
      </span>
    ),
    plain: (m, ctx) => `@${ctx.userName(m[1] ?? '')}`,
  },
  {
    re: /<@&(\d{1,20})>/y,
    render: (m, key, ctx) => (
      <span key={key} className="mention">
        @{ctx.roleName(m[1] ?? '') ?? 'deleted-role'}
      </span>
    ),
    plain: (m, ctx) => `@${ctx.roleName(m[1] ?? '') ?? 'deleted-role'}`,
  },
  {
    re: /<#(\d{1,20})>/y,
    render: (m, key, ctx) => {
      const id = m[1] ?? '';
      const name = ctx.channelName(id);
      if (!name || !ctx.onChannel)
        return (
          <span key={key} className="mention">
            #{name ?? 'unknown'}
          </span>
        );
      return (
        <button key={key} type="button" className="mention link" onClick={() => ctx.onChannel?.(id)}>
          #{name}
        </button>
      );
    },
    plain: (m, ctx) => `#${ctx.channelName(m[1] ?? '') ?? 'unknown'}`,
  },
  {
    re: /@(everyone|here)\b/y,
    render: (m, key) => (
      <span key={key} className="mention">
        @{m[1]}
      </span>
    ),
    plain: (m) => `@${m[1]}`,
  },
  {
    re: /<(a?):(\w{2,32}):(\d{1,20})>/y,
    render: (m, key) => (
      <img
        key={key}
        className="emoji"
        alt={`:${m[2]}:`}
        title={`:${m[2]}:`}
        src={`/media/emojis/${m[3]}.${m[1] ? 'gif' : 'png'}`}
        width={22}
        height={22}
      />
    ),
    plain: (m) => `:${m[2]}:`,
  },
];

// Characters where a rule may start; everything else is plain text and skipped quickly.
const STARTERS = /[\\`|*_~[h<@]/g;

export function inline(text: string, ctx: MarkdownContext): ReactNode[] {
  const out: ReactNode[] = [];
  let key = 0;
  scan(
    text,
    (plain) => out.push(plain),
    (rule, m) => out.push(rule.render(m, key++, ctx)),
  );
  return out;
}

/** One line of markdown as the words it shows: mentions by name, emojis by shortcode, no markers. */
function plainInline(text: string, ctx: MarkdownContext): string {
  let out = '';
  scan(
    text,
    (plain) => {
      out += plain;
    },
    (rule, m) => {
      out += rule.plain(m, ctx);
    },
  );
  return out;
}

/** Walks a line: runs of plain text and the rules that match, in order. */
function scan(text: string, onText: (plain: string) => void, onRule: (rule: Rule, m: RegExpExecArray) => void) {
  let plain = '';
  let i = 0;
  while (i < text.length) {
    STARTERS.lastIndex = i;
    const next = STARTERS.exec(text);
    if (!next) {
      plain += text.slice(i);
      break;
    }
    plain += text.slice(i, next.index);
    i = next.index;
    let matched = false;
    for (const rule of RULES) {
      rule.re.lastIndex = i;
      const m = rule.re.exec(text);
      if (m && m[0].length > 0) {
        if (plain) onText(plain);
        plain = '';
        onRule(rule, m);
        i += m[0].length;
        matched = true;
        break;
      }
    }
    if (!matched) {
      plain += text[i];
      i++;
    }
  }
  if (plain) onText(plain);
}

/**
 * A message's markdown as one line of plain words, for an accessible name or an announcement: what the
 * rendered message shows (a hidden spoiler as its word), with the blocks joined by spaces.
 */
export function plainText(source: string, ctx: MarkdownContext): string {
  return blocks(source)
    .flatMap((block) => {
      switch (block.kind) {
        case 'code':
          return [block.text];
        case 'heading':
          return [plainInline(block.text, ctx)];
        case 'list':
          return block.items.map((item) => plainInline(item, ctx));
        case 'quote':
          return [plainText(block.lines.join('\n'), ctx)];
        default:
          return block.lines.map((line) => plainInline(line, ctx));
      }
    })
    .map((part) => part.trim())
    .filter(Boolean)
    .join(' ')
    .replace(/\s+/g, ' ');
}

type Block =
  | { kind: 'code'; lang: string; text: string }
  | { kind: 'quote'; lines: string[] }
  | { kind: 'heading'; level: 1 | 2 | 3; text: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'text'; lines: string[] };

export function blocks(source: string): Block[] {
  const lines = source.split('\n');
  const out: Block[] = [];
  const text = (line: string) => {
    const last = out.at(-1);
    if (last?.kind === 'text') last.lines.push(line);
    else out.push({ kind: 'text', lines: [line] });
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const fence = /^```(\w[\w+-]*)?\s*(.*)$/.exec(line);
    if (fence) {
      const rest = lines.slice(i);
      const joined = rest.join('\n');
      const close = joined.indexOf('```', 3 + (fence[1]?.length ?? 0));
      if (close > 0) {
        const inner = joined.slice(3, close);
        const nl = inner.indexOf('\n');
        const lang = nl >= 0 && /^\w[\w+-]*$/.test(inner.slice(0, nl).trim()) ? inner.slice(0, nl).trim() : '';
        const body = lang ? inner.slice(nl + 1) : inner.replace(/^\n/, '');
        out.push({ kind: 'code', lang, text: body.replace(/\n$/, '') });
        const consumed = joined.slice(0, close + 3).split('\n').length - 1;
        const after = (lines[i + consumed] ?? '').slice((lines[i + consumed] ?? '').indexOf('```') + 3);
        i += consumed;
        if (after.trim()) text(after);
        continue;
      }
    }
    if (line.startsWith('>>> ')) {
      out.push({ kind: 'quote', lines: [line.slice(4), ...lines.slice(i + 1)] });
      break;
    }
    const quote = /^> ?(.*)$/.exec(line);
    if (quote && line.startsWith('> ')) {
      const last = out.at(-1);
      if (last?.kind === 'quote') last.lines.push(quote[1] ?? '');
      else out.push({ kind: 'quote', lines: [quote[1] ?? ''] });
      continue;
    }
    const heading = /^(#{1,3}) (.+)$/.exec(line);
    if (heading) {
      out.push({ kind: 'heading', level: (heading[1]?.length ?? 1) as 1 | 2 | 3, text: heading[2] ?? '' });
      continue;
    }
    const item = /^\s*(?:([-*])|(\d{1,9})\.) (.*)$/.exec(line);
    if (item) {
      const ordered = item[2] !== undefined;
      const last = out.at(-1);
      if (last?.kind === 'list' && last.ordered === ordered) last.items.push(item[3] ?? '');
      else out.push({ kind: 'list', ordered, items: [item[3] ?? ''] });
      continue;
    }
    text(line);
  }
  return out;
}

function lines(parts: string[], ctx: MarkdownContext): ReactNode[] {
  return parts.map((line, index) => (
    // biome-ignore lint/suspicious/noArrayIndexKey: lines of one immutable text
    <Fragment key={index}>
      {index > 0 && <br />}
      {inline(line, ctx)}
    </Fragment>
  ));
}

export function Markdown({ source, ctx }: { source: string; ctx: MarkdownContext }) {
  return (
    <>
      {blocks(source).map((block, index) => {
        const key = `${block.kind}${index}`;
        switch (block.kind) {
          case 'code':
            return <CodeBlock key={key} lang={block.lang} text={block.text} />;
          case 'quote':
            return (
              <blockquote key={key}>
                <Markdown source={block.lines.join('\n')} ctx={ctx} />
              </blockquote>
            );
          case 'heading': {
            // Message headings are not document headings (the page's outline stays the app's).
            return (
              <p key={key} className={`md-h${block.level}`}>
                {inline(block.text, ctx)}
              </p>
            );
          }
          case 'list': {
            // biome-ignore lint/suspicious/noArrayIndexKey: items of one immutable text
            const items = block.items.map((item, i) => <li key={`${key}-${i}`}>{inline(item, ctx)}</li>);
            return block.ordered ? <ol key={key}>{items}</ol> : <ul key={key}>{items}</ul>;
          }
          default:
            return (
              <p key={key} className="md-p">
                {lines(block.lines, ctx)}
              </p>
            );
        }
      })}
    </>
  );
}

type Highlighter = (text: string, lang: string) => ReactNode[] | null;
let highlighter: Promise<Highlighter> | undefined;

function CodeBlock({ lang, text }: { lang: string; text: string }) {
  const [tokens, setTokens] = useState<ReactNode[] | null>(null);
  useEffect(() => {
    if (!lang) return;
    let live = true;
    highlighter ??= import('./highlight.ts').then((m) => m.highlight);
    void highlighter.then((highlight) => {
      if (live) setTokens(highlight(text, lang));
    });
    return () => {
      live = false;
    };
  }, [lang, text]);
  return (
    <pre className="code-block" data-lang={lang || undefined}>
      <code>{tokens ?? text}</code>
    </pre>
  );
}
