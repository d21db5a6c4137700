import type { Redis } from 'ioredis';
import { deleteByPattern, globEscape, type RedisKeyspace } from './redis-keyspace.ts';
import {
  type AfkCandidate,
  type StoredCall,
  type StoredVoiceState,
  type VoiceGrant,
  type VoiceStateStore,
  voiceScope,
} from './voice-states.ts';

/**
 * Voice states on Redis. Key layout (after the deployment prefix):
 *   <p>voice:guild:<guild id>   hash user id → JSON voice state
 *   <p>voice:grant:<digest>     JSON grant, expires with the grant
 *   <p>voice:active             hash `<guild id>:<user id>` → last activity (unix ms), for the AFK timeout
 *   <p>voice:call:<channel id>  JSON call record of a DM or group-DM call
 *   <p>voice:afk                sorted set `<guild id>:<user id>` scored by when its AFK check is due
 *   <p>voice:ring               sorted set of DM channel ids scored by when their call's ring check is due
 * On a cluster, `voice:active` and `voice:afk` (used together) are `voice:{afk}:active` and `voice:{afk}:afk`.
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

/** Pops the due AFK checks (ZREM is the claim) with their last activity. */
const TAKE_DUE_SCRIPT = `
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, member in ipairs(members) do
  redis.call('ZREM', KEYS[1], member)
  local at = redis.call('HGET', KEYS[2], member)
  if at then
    table.insert(out, member)
    table.insert(out, at)
  end
end
return out
`;

/** Pops the due ring checks (ZREM is the claim). */
const TAKE_DUE_RINGS_SCRIPT = `
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(members) do redis.call('ZREM', KEYS[1], member) end
return members
`;

type VoiceRedis = Redis & {
  hearthVoiceTakeDueRings(ringKey: string, now: number, limit: number): Promise<string[]>;
  hearthVoiceTakeDue(afkKey: string, activeKey: string, now: number, limit: number): Promise<string[]>;
  hearthVoicePut(key: string, state: string, limit: number): Promise<number>;
  hearthVoiceRemove(key: string, userId: string, sessionId: string): Promise<string | null>;
};

export class RedisVoiceStateStore implements VoiceStateStore {
  private readonly client: VoiceRedis;
  private readonly activeKey: string;
  private readonly afkKey: string;

  constructor(
    private readonly keyspace: RedisKeyspace,
    private readonly prefix: string,
  ) {
    const client = keyspace.client;
    this.client = client as VoiceRedis;
    // One hash slot for both on a cluster: the AFK scripts and transactions use them together.
    const tag = keyspace.cluster ? '{afk}:' : '';
    this.activeKey = `${prefix}voice:${tag}active`;
    this.afkKey = `${prefix}voice:${tag}afk`;
    if (!('hearthVoicePut' in client)) {
      client.defineCommand('hearthVoicePut', { numberOfKeys: 1, lua: PUT_SCRIPT });
      client.defineCommand('hearthVoiceRemove', { numberOfKeys: 1, lua: REMOVE_SCRIPT });
      client.defineCommand('hearthVoiceTakeDue', { numberOfKeys: 2, lua: TAKE_DUE_SCRIPT });
      client.defineCommand('hearthVoiceTakeDueRings', { numberOfKeys: 1, lua: TAKE_DUE_RINGS_SCRIPT });
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
    return (await this.client.hearthVoicePut(this.guildKey(voiceScope(state)), JSON.stringify(state), userLimit)) === 1;
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

  async markActive(guildId: string, userId: string, activeAt: number, checkAt: number): Promise<void> {
    const member = `${guildId}:${userId}`;
    await this.client.multi().hset(this.activeKey, member, String(activeAt)).zadd(this.afkKey, checkAt, member).exec();
  }

  async scheduleAfkCheck(guildId: string, userId: string, checkAt: number): Promise<void> {
    const member = `${guildId}:${userId}`;
    if (await this.client.hexists(this.activeKey, member)) await this.client.zadd(this.afkKey, checkAt, member);
  }

  async takeDueAfkChecks(now: number, limit: number): Promise<AfkCandidate[]> {
    const flat = await this.client.hearthVoiceTakeDue(this.afkKey, this.activeKey, now, limit);
    const due: AfkCandidate[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const [guildId, userId] = (flat[i] as string).split(':');
      if (guildId && userId) due.push({ guildId, userId, activeAt: Number(flat[i + 1]) });
    }
    return due;
  }

  async forgetActivity(guildId: string, userId: string): Promise<void> {
    const member = `${guildId}:${userId}`;
    await this.client.multi().hdel(this.activeKey, member).zrem(this.afkKey, member).exec();
  }

  async call(channelId: string): Promise<StoredCall | undefined> {
    const raw = await this.client.get(`${this.prefix}voice:call:${channelId}`);
    return raw ? (JSON.parse(raw) as StoredCall) : undefined;
  }

  async createCall(call: StoredCall): Promise<boolean> {
    return (await this.client.set(`${this.prefix}voice:call:${call.channel_id}`, JSON.stringify(call), 'NX')) === 'OK';
  }

  async putCall(call: StoredCall): Promise<void> {
    await this.client.set(`${this.prefix}voice:call:${call.channel_id}`, JSON.stringify(call));
  }

  async deleteCall(channelId: string): Promise<StoredCall | undefined> {
    const raw = await this.client.getdel(`${this.prefix}voice:call:${channelId}`);
    return raw ? (JSON.parse(raw) as StoredCall) : undefined;
  }

  async callsOf(channelIds: string[]): Promise<StoredCall[]> {
    if (channelIds.length === 0) return [];
    const found: StoredCall[] = [];
    // MGET in slices, so a user with thousands of DMs does not make one huge command; on a cluster the keys
    // span slots, so one GET each (the cluster client pipelines those of one master together).
    for (let i = 0; i < channelIds.length; i += 500) {
      const keys = channelIds.slice(i, i + 500).map((id) => `${this.prefix}voice:call:${id}`);
      const raws = this.keyspace.cluster
        ? await Promise.all(keys.map((key) => this.client.get(key)))
        : await this.client.mget(...keys);
      for (const raw of raws) if (raw) found.push(JSON.parse(raw) as StoredCall);
    }
    return found;
  }

  async scheduleRingCheck(channelId: string, checkAt: number): Promise<void> {
    await this.client.zadd(`${this.prefix}voice:ring`, checkAt, channelId);
  }

  async takeDueRingChecks(now: number, limit: number): Promise<string[]> {
    return this.client.hearthVoiceTakeDueRings(`${this.prefix}voice:ring`, now, limit);
  }

  async reset(): Promise<void> {
    await deleteByPattern(this.keyspace, `${globEscape(this.prefix)}voice:*`);
  }
}
