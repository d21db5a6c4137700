import type { Snowflake } from './types.ts';

export interface StoredSession {
  token: string;
  userId: Snowflake;
}

const KEY = 'hearth.session';

/**
 * Keeps the session token in localStorage so every tab of this origin shares one sign-in (docs/web.md,
 * "Token handling"). Other tabs learn about sign-in and sign-out through the `storage` event.
 */
export class SessionStore {
  private listeners = new Set<(session: StoredSession | null) => void>();

  constructor(private readonly storage: Storage = window.localStorage) {
    window.addEventListener('storage', (event) => {
      if (event.key === KEY) this.emit(this.get());
    });
  }

  get(): StoredSession | null {
    const raw = this.storage.getItem(KEY);
    if (!raw) return null;
    try {
      const parsed = JSON.parse(raw) as Partial<StoredSession>;
      return typeof parsed.token === 'string' && typeof parsed.userId === 'string'
        ? { token: parsed.token, userId: parsed.userId }
        : null;
    } catch {
      return null;
    }
  }

  set(session: StoredSession): void {
    this.storage.setItem(KEY, JSON.stringify(session));
    this.emit(session);
  }

  clear(): void {
    this.storage.removeItem(KEY);
    this.emit(null);
  }

  subscribe(listener: (session: StoredSession | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(session: StoredSession | null): void {
    for (const listener of this.listeners) listener(session);
  }
}
