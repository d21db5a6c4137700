import { type ComponentType, type LazyExoticComponent, lazy, useEffect, useState } from 'react';

/** A route: an exact path and the page it lazily loads (each feature is its own chunk). */
export interface RouteDef {
  path: string;
  page: LazyExoticComponent<ComponentType>;
  /** Who may see it: `signed-out` pages send a signed-in person to the chat, `signed-in` ones to sign-in. */
  access: 'any' | 'signed-in' | 'signed-out';
  /** Starts loading the page's chunk (boot calls it for the first page, in parallel with discovery). */
  preload: () => Promise<unknown>;
}

export function route(
  path: string,
  access: RouteDef['access'],
  load: () => Promise<{ default: ComponentType }>,
): RouteDef {
  return { path, access, page: lazy(load), preload: load };
}

/** Where a signed-in person lands (`/`, after signing in, "home" links): the chat, as the platform's clients do. */
export const CHAT_HOME = '/channels/@me';

export interface Location {
  pathname: string;
  search: string;
  hash: string;
}

function readLocation(): Location {
  const { pathname, search, hash } = window.location;
  return { pathname, search, hash };
}

/** History API navigation: pushState plus a popstate listener. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

export function useLocation(): Location {
  const [location, setLocation] = useState(readLocation);
  useEffect(() => {
    const update = () => setLocation(readLocation());
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return location;
}
