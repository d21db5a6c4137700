/**
 * Emailed links carry their token in the URL fragment (`/verify#token=…`): fragments never reach a server
 * log or a Referer. The page reads it once, then removes it from the address bar and history.
 */
export function takeFragmentParam(name: string): string | null {
  const params = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  const value = params.get(name);
  if (value !== null) {
    window.history.replaceState(window.history.state, '', window.location.pathname + window.location.search);
  }
  return value;
}
