/**
 * Emailed links carry their token in the URL fragment (`/verify#token=…`): fragments never reach a server
 * log or a Referer. The page reads it once, then removes it from the address bar and history; the value is
 * kept for the rest of the page's life so a re-render (or React's development double render) still sees it.
 */
const taken = new Map<string, string | null>();

export function takeFragmentParam(name: string): string | null {
  const key = `${window.location.pathname}:${name}`;
  if (taken.has(key)) return taken.get(key) ?? null;
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const value = params.get(name);
  taken.set(key, value);
  if (value !== null) {
    window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search);
  }
  return value;
}
