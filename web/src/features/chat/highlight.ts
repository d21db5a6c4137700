import Prism from 'prismjs';
import 'prismjs/components/prism-clike';
import 'prismjs/components/prism-javascript';
import 'prismjs/components/prism-typescript';
import 'prismjs/components/prism-json';
import 'prismjs/components/prism-bash';
import 'prismjs/components/prism-python';
import 'prismjs/components/prism-rust';
import 'prismjs/components/prism-go';
import 'prismjs/components/prism-sql';
import 'prismjs/components/prism-css';
import 'prismjs/components/prism-markup';
import 'prismjs/components/prism-yaml';
import 'prismjs/components/prism-diff';
import { createElement, type ReactNode } from 'react';

/**
 * Code-block highlighting, a chunk of its own loaded with the first fenced block that names a language.
 * Prism's tokenizer gives a token tree that is rendered as React elements (Prism's HTML output is not used).
 */
const ALIASES: Record<string, string> = {
  js: 'javascript',
  ts: 'typescript',
  sh: 'bash',
  shell: 'bash',
  py: 'python',
  rs: 'rust',
  html: 'markup',
  xml: 'markup',
  yml: 'yaml',
};

function render(tokens: (string | Prism.Token)[], prefix: string): ReactNode[] {
  return tokens.map((token, index) => {
    if (typeof token === 'string') return token;
    const content = Array.isArray(token.content)
      ? render(token.content as (string | Prism.Token)[], `${prefix}${index}-`)
      : typeof token.content === 'string'
        ? token.content
        : render([token.content as Prism.Token], `${prefix}${index}-`);
    return createElement('span', { key: `${prefix}${index}`, className: `tok-${token.type}` }, content);
  });
}

export function highlight(text: string, lang: string): ReactNode[] | null {
  const name = ALIASES[lang.toLowerCase()] ?? lang.toLowerCase();
  const grammar = Prism.languages[name];
  if (!grammar) return null;
  return render(Prism.tokenize(text, grammar), 't');
}
