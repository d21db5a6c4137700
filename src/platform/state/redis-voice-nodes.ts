import type { Redis } from 'ioredis';
import type { RedisKeyspace } from './redis-keyspace.ts';
import type { RoomAssignment, VoiceNodeAnnouncement, VoiceNodeStore } from './voice-nodes.ts';

/**
 * Voice nodes and room placement on Redis. Key layout (after the deployment prefix):
 *   <p>voice:node:<node id>   JSON announcement, expires with the heartbeat's TTL (Redis's clock decides)
 *   <p>voice:nodes            set of announced node ids (an id whose key expired is dropped when read)
 *   <p>voice:rooms            hash room key → `<at>:<node id>` (the assignment; `at` makes each placement distinct)
 * On a cluster all three share the hash tag `{nodes}` (`voice:{nodes}`, `voice:{nodes}:node:<id>`,
 * `voice:{nodes}:rooms`): an announcement writes two of them at once and the list reads every node key at once.
 */

/** Keeps the room's node if it is live (ARGV[4..]), else assigns the candidate; the write refreshes `at`. */
const PLACE_SCRIPT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
local node = ARGV[2]
if current then
  local held = string.match(current, '^[^:]*:(.*)$')
  for i = 4, #ARGV do
    if ARGV[i] == held then node = held end
  end
end
local value = ARGV[3] .. ':' .. node
redis.call('HSET', KEYS[1], ARGV[1], value)
return {value, current or ''}
`;

/** Compare-and-set of one assignment (ARGV[3] empty = delete). */
const REASSIGN_SCRIPT = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[3]) end
return 1
`;

type NodesRedis = Redis & {
  hearthVoicePlace(
    key: string,
    roomKey: string,
    candidate: string,
    at: number,
    ...live: string[]
  ): Promise<[string, string]>;
  hearthVoiceReassign(key: string, roomKey: string, expected: string, next: string): Promise<number>;
};

function encode(assignment: RoomAssignment): string {
  return `${assignment.at}:${assignment.node}`;
}

function decode(raw: string): RoomAssignment {
  const colon = raw.indexOf(':');
  return { at: Number(raw.slice(0, colon)), node: raw.slice(colon + 1) };
}

export class RedisVoiceNodeStore implements VoiceNodeStore {
  private readonly client: NodesRedis;
  private readonly roomsKey: string;
  private readonly nodesKey: string;

  private readonly nodeKeyPrefix: string;

  constructor(keyspace: RedisKeyspace, prefix: string) {
    const client = keyspace.client;
    this.client = client as NodesRedis;
    this.nodesKey = `${prefix}voice:${keyspace.cluster ? '{nodes}' : 'nodes'}`;
    this.roomsKey = `${prefix}voice:${keyspace.cluster ? '{nodes}:' : ''}rooms`;
    this.nodeKeyPrefix = `${prefix}voice:${keyspace.cluster ? '{nodes}:' : ''}node:`;
    if (!('hearthVoicePlace' in client)) {
      client.defineCommand('hearthVoicePlace', { numberOfKeys: 1, lua: PLACE_SCRIPT });
      client.defineCommand('hearthVoiceReassign', { numberOfKeys: 1, lua: REASSIGN_SCRIPT });
    }
  }

  private nodeKey(nodeId: string): string {
    return `${this.nodeKeyPrefix}${nodeId}`;
  }

  async announce(node: VoiceNodeAnnouncement, ttlMs: number): Promise<void> {
    await this.client
      .multi()
      .set(this.nodeKey(node.id), JSON.stringify(node), 'PX', Math.max(1, Math.round(ttlMs)))
      .sadd(this.nodesKey, node.id)
      .exec();
  }

  async withdraw(nodeId: string): Promise<void> {
    await this.client.multi().del(this.nodeKey(nodeId)).srem(this.nodesKey, nodeId).exec();
  }

  async liveNodes(): Promise<VoiceNodeAnnouncement[]> {
    const ids = await this.client.smembers(this.nodesKey);
    if (ids.length === 0) return [];
    const values = await this.client.mget(...ids.map((id) => this.nodeKey(id)));
    const live: VoiceNodeAnnouncement[] = [];
    const gone: string[] = [];
    values.forEach((raw, index) => {
      if (raw) live.push(JSON.parse(raw) as VoiceNodeAnnouncement);
      else gone.push(ids[index] as string);
    });
    if (gone.length > 0) await this.client.srem(this.nodesKey, ...gone);
    return live;
  }

  async place(
    roomKey: string,
    candidate: string,
    liveIds: readonly string[],
    at: number,
  ): Promise<{ assignment: RoomAssignment; previous: RoomAssignment | undefined }> {
    const [value, current] = await this.client.hearthVoicePlace(this.roomsKey, roomKey, candidate, at, ...liveIds);
    const assignment = decode(value);
    const previous = current ? decode(current) : undefined;
    return { assignment, previous: previous && previous.node !== assignment.node ? previous : undefined };
  }

  async assignments(): Promise<Map<string, RoomAssignment>> {
    const all = await this.client.hgetall(this.roomsKey);
    return new Map(Object.entries(all).map(([key, raw]) => [key, decode(raw)]));
  }

  async assignmentsOf(roomKeys: readonly string[]): Promise<(RoomAssignment | undefined)[]> {
    if (roomKeys.length === 0) return [];
    const values = await this.client.hmget(this.roomsKey, ...roomKeys);
    return values.map((raw) => (raw ? decode(raw) : undefined));
  }

  async reassign(roomKey: string, expected: RoomAssignment, next: RoomAssignment | null): Promise<boolean> {
    const done = await this.client.hearthVoiceReassign(
      this.roomsKey,
      roomKey,
      encode(expected),
      next ? encode(next) : '',
    );
    return done === 1;
  }

  async reset(): Promise<void> {
    await this.client.del(this.roomsKey);
  }
}
