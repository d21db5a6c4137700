/**
 * Who is online, shared by every process: each gateway session reports its own presence, and a user's
 * presence is the aggregate of their live sessions (docs/gateway.md, "Presence"). Entries carry an expiry so a
 * process that dies without saying goodbye cannot leave its users online forever; the owner refreshes them.
 */
export type SessionStatus = 'online' | 'idle' | 'dnd' | 'invisible';
export type ClientPlatform = 'desktop' | 'mobile' | 'web';

export interface SessionPresence {
  status: SessionStatus;
  activities: Record<string, unknown>[];
  platform: ClientPlatform;
  afk: boolean;
  customStatus: Record<string, unknown> | null;
  /** Unix ms of the last change: the most recent session decides the user's status. */
  updatedAt: number;
  /** Unix ms after which the entry counts as gone (its process stopped refreshing it). */
  expiresAt: number;
}

/** A visible user's presence; an offline (or invisible) user has none. */
export interface UserPresence {
  status: 'online' | 'idle' | 'dnd';
  activities: Record<string, unknown>[];
  client_status: Partial<Record<ClientPlatform, 'online' | 'idle' | 'dnd'>>;
  afk: boolean;
  mobile: boolean;
  custom_status: Record<string, unknown> | null;
}

/** Discord shows at most this many activities per user. */
export const MAX_USER_ACTIVITIES = 10;

/**
 * The user's presence from their sessions' entries: the most recently changed live session sets the status
 * (a status is one choice per person, applied to every session), invisible hides everything, and each
 * platform reports the status of its own most recent session.
 */
export function aggregatePresence(entries: Iterable<SessionPresence>, now: number): UserPresence | undefined {
  const live = [...entries].filter((entry) => entry.expiresAt > now).sort((a, b) => b.updatedAt - a.updatedAt);
  const lead = live[0];
  if (!lead || lead.status === 'invisible') return undefined;
  const clientStatus: UserPresence['client_status'] = {};
  const activities: Record<string, unknown>[] = [];
  for (const entry of live) {
    if (entry.status === 'invisible') continue;
    clientStatus[entry.platform] ??= entry.status;
    for (const activity of entry.activities) if (activities.length < MAX_USER_ACTIVITIES) activities.push(activity);
  }
  return {
    status: lead.status,
    activities,
    client_status: clientStatus,
    afk: lead.afk,
    mobile: clientStatus.mobile !== undefined,
    custom_status: lead.customStatus,
  };
}

/** Whether two aggregates look the same to a client (no PRESENCE_UPDATE is sent when they do). */
export function samePresence(a: UserPresence | undefined, b: UserPresence | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return JSON.stringify(a) === JSON.stringify(b);
}

export interface PresenceChange {
  before: UserPresence | undefined;
  after: UserPresence | undefined;
  /**
   * Live (unexpired) session entries of the user after the update, invisible ones included: 0 after a removal
   * means the user's last session anywhere just went away (temporary memberships end then).
   */
  sessionsAfter: number;
}

export interface PresenceEntryRef {
  userId: string;
  sessionId: string;
  entry: SessionPresence;
}

export interface PresenceStore {
  /** Sets (or, with `undefined`, removes) one session's entry; returns the user's presence before and after. */
  update(userId: string, sessionId: string, entry: SessionPresence | undefined, now: number): Promise<PresenceChange>;
  /** The visible presences among `userIds` (absent = offline). */
  getMany(userIds: readonly string[], now: number): Promise<Map<string, UserPresence>>;
  /** Rewrites live entries owned by this process (a later expiry); entries removed meanwhile stay removed. */
  refresh(entries: readonly PresenceEntryRef[]): Promise<void>;
  /** Clears everything (test harness). */
  reset(): Promise<void>;
}

export class InProcessPresenceStore implements PresenceStore {
  private readonly users = new Map<string, Map<string, SessionPresence>>();

  async update(
    userId: string,
    sessionId: string,
    entry: SessionPresence | undefined,
    now: number,
  ): Promise<PresenceChange> {
    let sessions = this.users.get(userId);
    const before = sessions ? aggregatePresence(sessions.values(), now) : undefined;
    if (entry) {
      if (!sessions) {
        sessions = new Map();
        this.users.set(userId, sessions);
      }
      sessions.set(sessionId, { ...entry });
    } else sessions?.delete(sessionId);
    if (sessions) for (const [id, value] of sessions) if (value.expiresAt <= now) sessions.delete(id);
    if (sessions?.size === 0) this.users.delete(userId);
    const after = sessions && sessions.size > 0 ? aggregatePresence(sessions.values(), now) : undefined;
    return { before, after, sessionsAfter: sessions?.size ?? 0 };
  }

  async getMany(userIds: readonly string[], now: number): Promise<Map<string, UserPresence>> {
    const found = new Map<string, UserPresence>();
    for (const userId of userIds) {
      const sessions = this.users.get(userId);
      if (!sessions) continue;
      const presence = aggregatePresence(sessions.values(), now);
      if (presence) found.set(userId, presence);
    }
    return found;
  }

  async refresh(entries: readonly PresenceEntryRef[]): Promise<void> {
    for (const { userId, sessionId, entry } of entries) {
      const sessions = this.users.get(userId);
      if (sessions?.has(sessionId)) sessions.set(sessionId, { ...entry });
    }
  }

  async reset(): Promise<void> {
    this.users.clear();
  }
}
