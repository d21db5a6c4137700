import type { ChainableCommander, Redis } from 'ioredis';
import {
  aggregatePresence,
  type PresenceChange,
  type PresenceEntryRef,
  type PresenceStore,
  type SessionPresence,
  type UserPresence,
} from './presences.ts';
import { deleteByPattern, globEscape, type RedisKeyspace } from './redis-keyspace.ts';

/**
 * Presences on Redis. Key layout (after the deployment prefix):
 *   <p>presence:user:<user id>   hash session id → JSON session presence; expires a day after the last write
 * Aggregation happens on read with the caller's clock, so an entry whose process died stops counting when
 * its own expiry passes, whatever the key's TTL.
 */
const KEY_TTL_MS = 86_400_000;
const READ_CHUNK = 1000;

/** Rewrites an entry only while it still exists: a refresh must not bring back a session that just ended. */
const REFRESH_SCRIPT = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
`;

type RefreshPipeline = ChainableCommander & {
  hearthPresenceRefresh(key: string, sessionId: string, entry: string, ttlMs: number): ChainableCommander;
};
type RefreshClient = Redis & {
  hearthPresenceRefresh(key: string, sessionId: string, entry: string, ttlMs: number): Promise<unknown>;
};

export class RedisPresenceStore implements PresenceStore {
  private readonly client: RefreshClient;

  constructor(
    private readonly keyspace: RedisKeyspace,
    private readonly prefix: string,
  ) {
    const client = keyspace.client;
    this.client = client as RefreshClient;
    if (!('hearthPresenceRefresh' in client))
      client.defineCommand('hearthPresenceRefresh', { numberOfKeys: 1, lua: REFRESH_SCRIPT });
  }

  private userKey(userId: string): string {
    return `${this.prefix}presence:user:${userId}`;
  }

  async update(
    userId: string,
    sessionId: string,
    entry: SessionPresence | undefined,
    now: number,
  ): Promise<PresenceChange> {
    const key = this.userKey(userId);
    const multi = this.client.multi().hgetall(key);
    if (entry) multi.hset(key, sessionId, JSON.stringify(entry)).pexpire(key, KEY_TTL_MS);
    else multi.hdel(key, sessionId);
    multi.hgetall(key);
    const results = (await multi.exec()) ?? [];
    const beforeRaw = (results[0]?.[1] ?? {}) as Record<string, string>;
    const afterRaw = (results[results.length - 1]?.[1] ?? {}) as Record<string, string>;
    const expired = Object.entries(afterRaw)
      .filter(([, raw]) => (JSON.parse(raw) as SessionPresence).expiresAt <= now)
      .map(([id]) => id);
    if (expired.length > 0) await this.client.hdel(key, ...expired);
    return {
      before: aggregateRaw(Object.values(beforeRaw), now),
      after: aggregateRaw(Object.values(afterRaw), now),
      // Read in the same MULTI as the write: the removal that takes a user's last entry sees 0, whichever process.
      sessionsAfter: Object.keys(afterRaw).length - expired.length,
    };
  }

  async getMany(userIds: readonly string[], now: number): Promise<Map<string, UserPresence>> {
    const found = new Map<string, UserPresence>();
    for (let start = 0; start < userIds.length; start += READ_CHUNK) {
      const chunk = userIds.slice(start, start + READ_CHUNK);
      // One pipeline on one server; on a cluster the users' keys live on several masters, so each read goes on
      // its own (the cluster client pipelines those of one master together).
      let results: (string[] | undefined)[];
      if (this.keyspace.cluster)
        results = await Promise.all(chunk.map((userId) => this.client.hvals(this.userKey(userId))));
      else {
        const pipeline = this.client.pipeline();
        for (const userId of chunk) pipeline.hvals(this.userKey(userId));
        results = ((await pipeline.exec()) ?? []).map((result) => result?.[1] as string[] | undefined);
      }
      chunk.forEach((userId, index) => {
        const values = results[index];
        if (!values || values.length === 0) return;
        const presence = aggregateRaw(values, now);
        if (presence) found.set(userId, presence);
      });
    }
    return found;
  }

  async refresh(entries: readonly PresenceEntryRef[]): Promise<void> {
    if (entries.length === 0) return;
    if (this.keyspace.cluster) {
      await Promise.all(
        entries.map(({ userId, sessionId, entry }) =>
          this.client.hearthPresenceRefresh(this.userKey(userId), sessionId, JSON.stringify(entry), KEY_TTL_MS),
        ),
      );
      return;
    }
    const pipeline = this.client.pipeline() as RefreshPipeline;
    for (const { userId, sessionId, entry } of entries)
      pipeline.hearthPresenceRefresh(this.userKey(userId), sessionId, JSON.stringify(entry), KEY_TTL_MS);
    await pipeline.exec();
  }

  async reset(): Promise<void> {
    await deleteByPattern(this.keyspace, `${globEscape(this.prefix)}presence:*`);
  }
}

function aggregateRaw(values: string[], now: number): UserPresence | undefined {
  return aggregatePresence(
    values.map((raw) => JSON.parse(raw) as SessionPresence),
    now,
  );
}
