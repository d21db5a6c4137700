// Readers for the packaging files (Dockerfile, .dockerignore, compose.yaml) used by test/api/packaging.test.ts.
// The YAML reader takes the subset compose.yaml is written in: block mappings and sequences, quoted and plain
// scalars, one-line flow sequences, comments, anchors, aliases and `<<` merge keys. Anything else is refused
// with the line, so the file cannot drift into syntax the test would misread.

type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };

interface Line {
  indent: number;
  text: string;
  number: number;
}

function stripComment(raw: string): string {
  let quote: string | null = null;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || raw[i - 1] === ' ')) return raw.slice(0, i).trimEnd();
  }
  return raw.trimEnd();
}

export function readYaml(source: string): Record<string, Yaml> {
  const lines: Line[] = [];
  source.split('\n').forEach((raw, index) => {
    if (raw.includes('\t')) throw new Error(`YAML line ${index + 1}: tab`);
    const text = stripComment(raw);
    if (text.trim() === '') return;
    lines.push({ indent: text.length - text.trimStart().length, text: text.trim(), number: index + 1 });
  });
  const anchors = new Map<string, Yaml>();
  let at = 0;
  const fail = (line: Line | undefined, why: string): never => {
    throw new Error(`YAML line ${line?.number ?? 'end'}: ${why}`);
  };

  function scalar(text: string, line: Line): Yaml {
    if (text.startsWith('"')) {
      if (!text.endsWith('"') || text.length < 2) fail(line, 'unterminated string');
      return JSON.parse(text) as string;
    }
    if (text.startsWith("'")) {
      if (!text.endsWith("'") || text.length < 2) fail(line, 'unterminated string');
      return text.slice(1, -1).replaceAll("''", "'");
    }
    if (text.startsWith('[')) {
      if (!text.endsWith(']')) fail(line, 'flow sequences must fit on one line');
      const items: Yaml[] = [];
      let current = '';
      let quote: string | null = null;
      for (const c of text.slice(1, -1)) {
        if (quote) {
          current += c;
          if (c === quote && !current.endsWith(`\\${quote}`)) quote = null;
        } else if (c === '"' || c === "'") {
          quote = c;
          current += c;
        } else if (c === ',') {
          items.push(scalar(current.trim(), line));
          current = '';
        } else current += c;
      }
      if (current.trim() !== '') items.push(scalar(current.trim(), line));
      return items;
    }
    if (text.startsWith('{') || text.startsWith('|') || text.startsWith('>') || text.startsWith('!'))
      fail(line, `unsupported syntax: ${text}`);
    if (text.startsWith('*')) {
      const name = text.slice(1);
      if (!anchors.has(name)) fail(line, `unknown alias ${name}`);
      return anchors.get(name) as Yaml;
    }
    if (text === 'true' || text === 'false') return text === 'true';
    if (text === 'null' || text === '~') return null;
    if (/^-?\d+$/.test(text)) return Number(text);
    return text;
  }

  /** A value after `key:` or `- `: inline, or the block on the following, deeper lines. */
  function value(rest: string, line: Line, parentIndent: number, allowSameIndentSequence: boolean): Yaml {
    let anchor: string | undefined;
    let text = rest;
    const anchored = /^&([\w-]+)(?:\s+(.*))?$/.exec(text);
    if (anchored) {
      anchor = anchored[1];
      text = anchored[2] ?? '';
    }
    let result: Yaml;
    if (text !== '') result = scalar(text, line);
    else {
      const next = lines[at];
      if (next && next.indent > parentIndent) result = block(next.indent);
      else if (next && allowSameIndentSequence && next.indent === parentIndent && next.text.startsWith('-'))
        result = sequence(parentIndent);
      else result = null;
    }
    if (anchor) anchors.set(anchor, result);
    return result;
  }

  function block(indent: number): Yaml {
    const first = lines[at] as Line;
    return first.text === '-' || first.text.startsWith('- ') ? sequence(indent) : mapping(indent);
  }

  function sequence(indent: number): Yaml[] {
    const items: Yaml[] = [];
    while (at < lines.length) {
      const line = lines[at] as Line;
      if (line.indent < indent) break;
      if (line.indent > indent) fail(line, 'unexpected indentation');
      if (!(line.text === '-' || line.text.startsWith('- '))) break;
      const rest = line.text.slice(1).trimStart();
      if (/^[\w.-]+:(\s|$)/.test(rest)) {
        // `- key: value`: a mapping whose keys line up with `key`.
        const inner = line.indent + (line.text.length - rest.length);
        lines[at] = { indent: inner, text: rest, number: line.number };
        items.push(mapping(inner));
      } else {
        at++;
        items.push(value(rest, line, indent, false));
      }
    }
    return items;
  }

  function mapping(indent: number): Record<string, Yaml> {
    const explicit: Record<string, Yaml> = {};
    const merged: Record<string, Yaml> = {};
    while (at < lines.length) {
      const line = lines[at] as Line;
      if (line.indent < indent) break;
      if (line.indent > indent) fail(line, 'unexpected indentation');
      if (line.text.startsWith('- ')) break;
      const match = /^("[^"]*"|'[^']*'|[^\s"'][^:]*?):(?:\s+(.*))?$/.exec(line.text);
      if (!match) throw new Error(`YAML line ${line.number}: not a mapping entry: ${line.text}`);
      const key = (match[1] as string).replace(/^["']|["']$/g, '');
      at++;
      const result = value(match[2] ?? '', line, indent, true);
      if (key === '<<') {
        if (result === null || typeof result !== 'object' || Array.isArray(result))
          fail(line, 'merge of a non-mapping');
        Object.assign(merged, result);
      } else {
        if (Object.hasOwn(explicit, key)) fail(line, `duplicate key ${key}`);
        explicit[key] = result;
      }
    }
    return { ...merged, ...explicit };
  }

  const root = mapping(0);
  if (at < lines.length) fail(lines[at], 'unexpected content');
  return root;
}

export interface DockerInstruction {
  keyword: string;
  args: string;
  line: number;
}

export interface DockerStage {
  from: string;
  name: string | undefined;
  instructions: DockerInstruction[];
}

/** Instructions by stage; continuation lines joined, comments dropped (as Docker does). */
export function readDockerfile(source: string): DockerStage[] {
  const stages: DockerStage[] = [];
  const raw = source.split('\n');
  for (let i = 0; i < raw.length; i++) {
    const start = i + 1;
    let text = (raw[i] as string).trim();
    if (text === '' || text.startsWith('#')) continue;
    while (text.endsWith('\\')) {
      text = text.slice(0, -1);
      i++;
      while (i < raw.length && (raw[i] as string).trim().startsWith('#')) i++;
      text += ` ${(raw[i] ?? '').trim()}`;
    }
    const match = /^(\w+)\s+(.*)$/s.exec(text);
    if (!match) throw new Error(`Dockerfile line ${start}: ${text}`);
    const keyword = (match[1] as string).toUpperCase();
    const args = (match[2] as string).replace(/\s+/g, ' ').trim();
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!from) throw new Error(`Dockerfile line ${start}: FROM ${args}`);
      stages.push({ from: from[1] as string, name: from[2], instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile line ${start}: ${keyword} before FROM`);
      stage.instructions.push({ keyword, args, line: start });
    }
  }
  return stages;
}

/** Exec form (`["a", "b"]`) or undefined for shell form. */
export function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  const parsed = JSON.parse(args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string')) throw new Error(`bad exec form ${args}`);
  return parsed;
}

/** A `.dockerignore` as a predicate over context-relative paths (`*`, `**`, `?`, `!` exceptions). */
export function dockerignore(source: string): (path: string) => boolean {
  const rules = source
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = (negate ? l.slice(1) : l).replace(/^\/+|\/+$/g, '');
      let regex = '';
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i] as string;
        if (c === '*' && pattern[i + 1] === '*') {
          regex += '.*';
          i++;
          if (pattern[i + 1] === '/') i++;
        } else if (c === '*') regex += '[^/]*';
        else if (c === '?') regex += '[^/]';
        else regex += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      // A directory that matches excludes everything under it.
      return { negate, regex: new RegExp(`^${regex}(/.*)?$`) };
    });
  return (path) => {
    let ignored = false;
    for (const rule of rules) if (rule.regex.test(path)) ignored = !rule.negate;
    return ignored;
  };
}

/** Compose's interpolation: `${VAR}`, `${VAR:?message}`, `${VAR:-default}`, `$$`. */
export function interpolate(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\$|\$\{(\w+)(?::([?-])([^}]*))?\}/g, (whole, name?: string, kind?: string, rest?: string) => {
    if (whole === '$$') return '$';
    const value = vars[name as string];
    if (value !== undefined && value !== '') return value;
    if (kind === '-') return rest ?? '';
    throw new Error(`compose: ${name} is not set${kind === '?' ? ` (${rest})` : ''}`);
  });
}

/** The variable names a compose file interpolates. */
export function interpolatedNames(text: string): string[] {
  return [...new Set([...text.matchAll(/\$\{(\w+)/g)].map((m) => m[1] as string))].sort();
}
