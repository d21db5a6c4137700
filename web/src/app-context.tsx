import { createContext, useContext } from 'react';
import type { HearthApi } from './api/api.ts';
import type { SessionStore } from './api/session-store.ts';
import type { DiscoveryDocument, PrivateUser, TokenResponse } from './api/types.ts';
import type { GatewayHub } from './gateway/hub.ts';

/** What every page may use: the instance's discovery document, the typed API and the sign-in state. */
export interface AppContextValue {
  discovery: DiscoveryDocument;
  api: HearthApi;
  sessions: SessionStore;
  /** The signed-in account, once `/users/@me` answered; null when signed out. */
  user: PrivateUser | null;
  /** The tab's gateway events (READY kept for late subscribers); connected only while signed in. */
  gateway: GatewayHub;
  /** Stores the session from a token response and loads the account. */
  signIn(response: TokenResponse): Promise<void>;
  /** Reads the account again (after a change the page made, without waiting for the gateway's USER_UPDATE). */
  refreshUser(): Promise<void>;
  /** Forgets the session locally (the server side is the caller's business). */
  signOutLocally(): void;
  navigate(to: string, options?: { replace?: boolean }): void;
}

export const AppContext = createContext<AppContextValue | null>(null);

export function useApp(): AppContextValue {
  const value = useContext(AppContext);
  if (!value) throw new Error('useApp outside <AppContext>');
  return value;
}
