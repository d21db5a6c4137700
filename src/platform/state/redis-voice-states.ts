import type { Redis } from 'ioredis';
import type { StoredVoiceState, VoiceGrant, VoiceStateStore } from './voice-states.ts';

/**
 * Voice states on Redis. Key layout (after the deployment prefix):
 *   <p>voice:guild:<guild id>   hash user id → JSON voice state
 *   <p>voice:grant:<digest>     JSON grant, expires with the grant
 */

/** Counts the channel's other occupants and writes only below the limit: one atomic step. */
const PUT_SCRIPT = `
local state = cjson.decode(ARGV[1])
local limit = tonumber(ARGV[2])
if limit > 0 then
  local others = 0
  for _, raw in ipairs(redis.call('HVALS', KEYS[1])) do
    local s = cjson.decode(raw)
    if s.channel_id == state.channel_id and s.user_id ~= state.user_id then others = others + 1 end
  end
  if others >= limit then return 0 end
end
redis.call('HSET', KEYS[1], state.user_id, ARGV[1])
return 1
`;

/** Deletes the user's state only while it belongs to the given session (empty = any). */
const REMOVE_SCRIPT = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return false end
if ARGV[2] ~= '' and cjson.decode(raw).session_id ~= ARGV[2] then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
return raw
`;

type VoiceRedis = Redis & {
  hearthVoicePut(key: string, state: string, limit: number): Promise<number>;
  hearthVoiceRemove(key: string, userId: string, sessionId: string): Promise<string | null>;
};

export class RedisVoiceStateStore implements VoiceStateStore {
  private readonly client: VoiceRedis;

  constructor(
    client: Redis,
    private readonly prefix: string,
  ) {
    this.client = client as VoiceRedis;
    if (!('hearthVoicePut' in client)) {
      client.defineCommand('hearthVoicePut', { numberOfKeys: 1, lua: PUT_SCRIPT });
      client.defineCommand('hearthVoiceRemove', { numberOfKeys: 1, lua: REMOVE_SCRIPT });
    }
  }

  private guildKey(guildId: string): string {
    return `${this.prefix}voice:guild:${guildId}`;
  }

  async get(guildId: string, userId: string): Promise<StoredVoiceState | undefined> {
    const raw = await this.client.hget(this.guildKey(guildId), userId);
    return raw ? (JSON.parse(raw) as StoredVoiceState) : undefined;
  }

  async put(state: StoredVoiceState, userLimit: number): Promise<boolean> {
    return (await this.client.hearthVoicePut(this.guildKey(state.guild_id), JSON.stringify(state), userLimit)) === 1;
  }

  async remove(guildId: string, userId: string, sessionId?: string): Promise<StoredVoiceState | undefined> {
    const raw = await this.client.hearthVoiceRemove(this.guildKey(guildId), userId, sessionId ?? '');
    return raw ? (JSON.parse(raw) as StoredVoiceState) : undefined;
  }

  async ofGuild(guildId: string): Promise<StoredVoiceState[]> {
    const values = await this.client.hvals(this.guildKey(guildId));
    return values.map((raw) => JSON.parse(raw) as StoredVoiceState);
  }

  async putGrant(digest: string, grant: VoiceGrant): Promise<void> {
    const ttl = Math.max(1, grant.expiresAt - Date.now());
    await this.client.set(`${this.prefix}voice:grant:${digest}`, JSON.stringify(grant), 'PX', ttl);
  }

  async grant(digest: string, now: number): Promise<VoiceGrant | undefined> {
    const raw = await this.client.get(`${this.prefix}voice:grant:${digest}`);
    if (!raw) return undefined;
    const grant = JSON.parse(raw) as VoiceGrant;
    return grant.expiresAt > now ? grant : undefined;
  }

  async reset(): Promise<void> {
    let cursor = '0';
    const pattern = `${this.prefix.replace(/[*?[\]\\]/g, '\\$&')}voice:*`;
    do {
      const [next, keys] = await this.client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await this.client.unlink(...keys);
    } while (cursor !== '0');
  }
}
