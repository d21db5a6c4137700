import { randomBytes } from 'node:crypto';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { BusHandler, EventBus, GapHandler } from './event-bus.ts';
import { BusPositions, LocalSubscribers, streamOrigin } from './event-bus.ts';
import type { IpBan, IpBanStore } from './ip-bans.ts';
import type { PresenceStore } from './presences.ts';
import { GCRA_ROUNDING_MS, type RateDecision, type RateLimiter } from './rate-limiter.ts';
import {
  bucketOf,
  CLUSTER_SLOTS,
  clusterKeyspace,
  deleteByPattern,
  globEscape,
  keySlot,
  type RedisKeyspace,
  singleServer,
} from './redis-keyspace.ts';
import { RedisPresenceStore } from './redis-presences.ts';
import { RedisVoiceNodeStore } from './redis-voice-nodes.ts';
import { RedisVoiceStateStore } from './redis-voice-states.ts';
import type { SlotDecision, SlotOptions, SlotRef, SlotStore } from './slots.ts';
import type { VoiceNodeStore } from './voice-nodes.ts';
import type { VoiceStateStore } from './voice-states.ts';

export interface RedisEventBusLike extends EventBus {
  /** Resolves once every SUBSCRIBE sent so far is acknowledged (messages published after it arrive). */
  ready(): Promise<void>;
}

export interface RedisState {
  bus: RedisEventBusLike;
  rateLimiter: RateLimiter;
  ipBans: IpBanStore;
  voiceStates: VoiceStateStore;
  voiceNodes: VoiceNodeStore;
  presences: PresenceStore;
  slots: SlotStore;
  close(): Promise<void>;
}

/**
 * Key layout (every key and channel starts with the configured prefix, so deployments can share a Redis):
 *   <p>rl:<bucket key>      GCRA theoretical arrival time (ms, float as text), expires when drained
 *   <p>ipfail:<ip key>      sorted set of failure times (sliding window), expires with the window
 *   <p>ipban:<ip key>       JSON ban, expires with the ban (cluster: <p>ipban:{ipbans}:<ip key>)
 *   <p>ipbans               sorted set index of banned ip keys, score = expiry (ms) (cluster: <p>{ipbans})
 *   <p>bus:<topic>          pub/sub channel (cluster: sharded channels, see RedisShardedEventBus)
 *   <p>slot:{<key>}         sorted set of slot holders, score = lease expiry (ms); expires with the last lease
 *   <p>slotidle:{<key>}     hash holder → idle since (same hash slot as the set, for a Redis cluster)
 *   <p>voice:…, <p>presence:… see redis-voice-states.ts, redis-voice-nodes.ts and redis-presences.ts
 */

/** `gcra()` in Lua: one script run is one atomic read-modify-write, so parallel consumers never overshoot. */
const GCRA_SCRIPT = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local interval = window / limit
local tat = tonumber(redis.call('GET', KEYS[1]) or '')
if tat == nil or tat < now then tat = now end
local newTat = tat + interval
local allowAt = newTat - window
if allowAt - now > ${GCRA_ROUNDING_MS} then
  return {0, 0, string.format('%.17g', allowAt - now), string.format('%.17g', tat - now)}
end
-- The TTL only collects garbage; the slack keeps a key alive while real time outruns the caller's clock
-- (a frozen test clock, a slow node), since an early expiry would forget the arrivals and admit too many.
local ttl = math.ceil(newTat - now) + 10000
redis.call('SET', KEYS[1], string.format('%.17g', newTat), 'PX', string.format('%d', ttl))
local remaining = math.floor((window - (newTat - now)) / interval + ${GCRA_ROUNDING_MS})
if remaining < 0 then remaining = 0 end
return {1, remaining, '0', string.format('%.17g', newTat - now)}
`;

/** Drops failures outside the window, adds this one, counts: atomically, like the in-process store. */
const RECORD_FAILURE_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.17g', now - window))
redis.call('ZADD', KEYS[1], string.format('%.17g', now), ARGV[3])
redis.call('PEXPIRE', KEYS[1], string.format('%d', math.max(1, math.ceil(window))))
return redis.call('ZCARD', KEYS[1])
`;

/** Reads a ban and drops it when expired by the caller's clock (which the test harness can shift). */
const FIND_BAN_SCRIPT = `
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local ban = cjson.decode(raw)
if ban.expiresAt ~= cjson.null and ban.expiresAt <= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
  return false
end
return raw
`;

/** Drops lapsed holders of a slot set (and their idle marks); the prelude of every slot script. */
const PRUNE_SLOTS = `
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
for _, member in ipairs(lapsed) do
  redis.call('ZREM', KEYS[1], member)
  redis.call('HDEL', KEYS[2], member)
end
`;

/** ARGV: member, now, expiry, leaseMs, limit, evictIdle ('1'). Returns {1} / {1, evicted} / {0}. */
const ACQUIRE_SLOT_SCRIPT = `${PRUNE_SLOTS}
local evicted = false
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then
  if ARGV[6] ~= '1' then return {0} end
  local idle = redis.call('HGETALL', KEYS[2])
  local since = nil
  for i = 1, #idle, 2 do
    local at = tonumber(idle[i + 1])
    if since == nil or at < since then since = at; evicted = idle[i] end
  end
  if not evicted then return {0} end
  redis.call('ZREM', KEYS[1], evicted)
  redis.call('HDEL', KEYS[2], evicted)
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
if evicted then return {1, evicted} end
return {1}
`;

/** ARGV: member, now, expiry, leaseMs. Returns 1 when the slot was still held. */
const BUSY_SLOT_SCRIPT = `${PRUNE_SLOTS}
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`;

/** ARGV: member, now, since, leaseMs. */
const IDLE_SLOT_SCRIPT = `${PRUNE_SLOTS}
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
`;

type ScriptedRedis = Redis & {
  hearthAcquireSlot(
    key: string,
    idleKey: string,
    member: string,
    now: number,
    expiry: number,
    leaseMs: number,
    limit: number,
    evictIdle: string,
  ): Promise<[number, string?]>;
  hearthBusySlot(
    key: string,
    idleKey: string,
    member: string,
    now: number,
    expiry: number,
    leaseMs: number,
  ): Promise<number>;
  hearthIdleSlot(
    key: string,
    idleKey: string,
    member: string,
    now: number,
    since: number,
    leaseMs: number,
  ): Promise<number>;
  hearthGcra(key: string, limit: number, windowMs: number, now: number): Promise<[number, number, string, string]>;
  hearthRecordFailure(key: string, now: number, windowMs: number, member: string): Promise<number>;
  hearthFindBan(banKey: string, indexKey: string, now: number, ipKey: string): Promise<string | null>;
};

function connect(url: string): ScriptedRedis {
  const client = new Redis(url, {
    lazyConnect: true,
    // Fail a command after a few reconnection attempts instead of queueing requests forever.
    maxRetriesPerRequest: 3,
  }) as ScriptedRedis;
  return withScripts(client);
}

function withScripts(client: ScriptedRedis): ScriptedRedis {
  // Connection errors also reject the commands in flight, which report them; the event itself adds nothing.
  client.on('error', () => {});
  client.defineCommand('hearthGcra', { numberOfKeys: 1, lua: GCRA_SCRIPT });
  client.defineCommand('hearthRecordFailure', { numberOfKeys: 1, lua: RECORD_FAILURE_SCRIPT });
  client.defineCommand('hearthFindBan', { numberOfKeys: 2, lua: FIND_BAN_SCRIPT });
  client.defineCommand('hearthAcquireSlot', { numberOfKeys: 2, lua: ACQUIRE_SLOT_SCRIPT });
  client.defineCommand('hearthBusySlot', { numberOfKeys: 2, lua: BUSY_SLOT_SCRIPT });
  client.defineCommand('hearthIdleSlot', { numberOfKeys: 2, lua: IDLE_SLOT_SCRIPT });
  return client;
}

class RedisRateLimiter implements RateLimiter {
  private readonly client: ScriptedRedis;

  constructor(
    private readonly keyspace: RedisKeyspace,
    private readonly prefix: string,
  ) {
    this.client = keyspace.client as ScriptedRedis;
  }

  async consume(key: string, limit: number, windowMs: number, now: number): Promise<RateDecision> {
    const [allowed, remaining, retryAfter, resetAfter] = await this.client.hearthGcra(
      `${this.prefix}rl:${key}`,
      limit,
      windowMs,
      now,
    );
    return {
      allowed: allowed === 1,
      limit,
      remaining,
      retryAfterMs: Number(retryAfter),
      resetAfterMs: Number(resetAfter),
    };
  }

  async reset(): Promise<void> {
    await deleteByPattern(this.keyspace, `${globEscape(this.prefix)}rl:*`);
  }
}

class RedisIpBanStore implements IpBanStore {
  private readonly client: ScriptedRedis;
  private readonly indexKey: string;
  /** The bans and their index share a hash tag on a cluster: ban, find, remove and list use them together. */
  private readonly banPrefix: string;

  constructor(
    private readonly keyspace: RedisKeyspace,
    private readonly prefix: string,
  ) {
    this.client = keyspace.client as ScriptedRedis;
    this.indexKey = keyspace.cluster ? `${prefix}{ipbans}` : `${prefix}ipbans`;
    this.banPrefix = keyspace.cluster ? `${prefix}ipban:{ipbans}:` : `${prefix}ipban:`;
  }

  private banKey(ipKey: string): string {
    return `${this.banPrefix}${ipKey}`;
  }

  async recordFailure(ipKey: string, now: number, windowMs: number): Promise<number> {
    // Two failures in the same millisecond must stay two members of the set.
    const member = `${now}:${randomBytes(6).toString('hex')}`;
    return this.client.hearthRecordFailure(`${this.prefix}ipfail:${ipKey}`, now, windowMs, member);
  }

  async ban(ban: IpBan): Promise<void> {
    const key = this.banKey(ban.ip);
    const multi = this.client.multi();
    if (ban.expiresAt === null) multi.set(key, JSON.stringify(ban));
    else {
      // Expiry is decided by `find` on the caller's (shiftable) clock; the key TTL only collects garbage,
      // so it is generous rather than exact.
      const ttl = Math.max(0, Math.ceil(ban.expiresAt - Date.now())) + 3_600_000;
      multi.set(key, JSON.stringify(ban), 'PX', ttl);
    }
    multi.zadd(this.indexKey, ban.expiresAt === null ? '+inf' : String(ban.expiresAt), ban.ip);
    await multi.exec();
  }

  async find(ipKey: string, now: number): Promise<IpBan | undefined> {
    const raw = await this.client.hearthFindBan(this.banKey(ipKey), this.indexKey, now, ipKey);
    return raw ? (JSON.parse(raw) as IpBan) : undefined;
  }

  async remove(ipKey: string): Promise<void> {
    const failures = `${this.prefix}ipfail:${ipKey}`;
    if (this.keyspace.cluster) {
      // The failure counter lives in its own slot: a second command, not part of the transaction.
      await this.client.multi().del(this.banKey(ipKey)).zrem(this.indexKey, ipKey).exec();
      await this.client.del(failures);
      return;
    }
    await this.client.multi().del(this.banKey(ipKey), failures).zrem(this.indexKey, ipKey).exec();
  }

  async list(now: number): Promise<IpBan[]> {
    await this.client.zremrangebyscore(this.indexKey, '-inf', String(now));
    const ips = await this.client.zrangebyscore(this.indexKey, `(${now}`, '+inf');
    if (ips.length === 0) return [];
    const raws = await this.client.mget(...ips.map((ip) => this.banKey(ip)));
    const bans: IpBan[] = [];
    for (const raw of raws) {
      if (!raw) continue;
      const ban = JSON.parse(raw) as IpBan;
      if (ban.expiresAt === null || ban.expiresAt > now) bans.push(ban);
    }
    return bans;
  }

  async reset(): Promise<void> {
    const prefix = globEscape(this.prefix);
    await deleteByPattern(this.keyspace, `${prefix}ipfail:*`);
    await deleteByPattern(this.keyspace, `${prefix}ipban:*`);
    await this.client.del(this.indexKey);
  }
}

class RedisSlotStore implements SlotStore {
  private readonly client: ScriptedRedis;

  constructor(
    private readonly keyspace: RedisKeyspace,
    private readonly prefix: string,
  ) {
    this.client = keyspace.client as ScriptedRedis;
  }

  /** Both keys of a slot set share a hash tag, so a Redis cluster keeps them on one node. */
  private keys(key: string): [string, string] {
    const tag = `{${key}}`;
    return [`${this.prefix}slot:${tag}`, `${this.prefix}slotidle:${tag}`];
  }

  async acquire(key: string, member: string, limit: number, options: SlotOptions): Promise<SlotDecision> {
    const [set, idle] = this.keys(key);
    const [admitted, evicted] = await this.client.hearthAcquireSlot(
      set,
      idle,
      member,
      options.now,
      options.now + options.leaseMs,
      Math.max(1, Math.ceil(options.leaseMs)),
      limit,
      options.evictIdle ? '1' : '0',
    );
    if (admitted !== 1) return { admitted: false };
    return evicted === undefined ? { admitted: true } : { admitted: true, evicted };
  }

  async release(key: string, member: string): Promise<void> {
    const [set, idle] = this.keys(key);
    await this.client.multi().zrem(set, member).hdel(idle, member).exec();
  }

  async idle(key: string, member: string, since: number, options: Pick<SlotOptions, 'now' | 'leaseMs'>): Promise<void> {
    const [set, idle] = this.keys(key);
    await this.client.hearthIdleSlot(set, idle, member, options.now, since, Math.max(1, Math.ceil(options.leaseMs)));
  }

  async busy(key: string, member: string, options: Pick<SlotOptions, 'now' | 'leaseMs'>): Promise<boolean> {
    const [set, idle] = this.keys(key);
    const lease = Math.max(1, Math.ceil(options.leaseMs));
    return (await this.client.hearthBusySlot(set, idle, member, options.now, options.now + lease, lease)) === 1;
  }

  async renew(slots: readonly SlotRef[], options: Pick<SlotOptions, 'now' | 'leaseMs'>): Promise<void> {
    if (slots.length === 0) return;
    const lease = Math.max(1, Math.ceil(options.leaseMs));
    // One pipeline on one server; on a cluster the sets live on several masters, so each command goes on its
    // own (the cluster client pipelines those of one master together).
    const pipeline = this.keyspace.cluster ? undefined : this.client.pipeline();
    const sent: Promise<unknown>[] = [];
    const renewed = new Set<string>();
    for (const { key, member } of slots) {
      const [set, idle] = this.keys(key);
      // XX: a slot that lapsed or was evicted meanwhile is not brought back.
      if (pipeline) pipeline.zadd(set, 'XX', options.now + lease, member);
      else sent.push(this.client.zadd(set, 'XX', options.now + lease, member));
      if (renewed.has(set)) continue;
      renewed.add(set);
      if (pipeline) pipeline.pexpire(set, lease).pexpire(idle, lease);
      else sent.push(this.client.pexpire(set, lease), this.client.pexpire(idle, lease));
    }
    if (pipeline) await pipeline.exec();
    else await Promise.all(sent);
  }

  async count(key: string, now: number): Promise<number> {
    return this.client.zcount(this.keys(key)[0], `(${now}`, '+inf');
  }

  async reset(): Promise<void> {
    const prefix = globEscape(this.prefix);
    await deleteByPattern(this.keyspace, `${prefix}slot:*`);
    await deleteByPattern(this.keyspace, `${prefix}slotidle:*`);
  }
}

interface Envelope {
  /** The publishing process: it has already delivered the message locally and skips the echo. */
  o: string;
  /** The message's number among the publisher's messages on this topic (`BusPositions`). */
  n: number;
  m: unknown;
}

/**
 * Pub/sub over a dedicated subscriber connection. Local subscribers get a message synchronously at
 * publish, exactly like the in-process bus; other processes get it through Redis. Messages must be JSON.
 */
/**
 * A message received from Redis, handled alike by the plain and the sharded bus: parsed (else dropped), the
 * process's own echo skipped, numbered against the topic's positions, then delivered locally. `originOf` names
 * the sender's numbering (the sharded bus numbers each stream apart).
 */
function deliverReceived(
  bus: { readonly origin: string; readonly positions: BusPositions; readonly local: LocalSubscribers },
  topic: string,
  text: string,
  originOf: (origin: string) => string,
): void {
  let envelope: Envelope;
  try {
    envelope = JSON.parse(text) as Envelope;
  } catch {
    return;
  }
  if (envelope.o === bus.origin || typeof envelope.n !== 'number') return;
  const mark = { origin: originOf(envelope.o), n: envelope.n };
  const skipped = bus.positions.received(topic, mark);
  // Reported before the message is delivered: what reacts to the gap (sessions told to resume) must not
  // let this message reach them as if nothing were missing before it.
  if (skipped) bus.local.gap({ topic, reason: 'sequence', origin: mark.origin, ...skipped });
  bus.local.deliver(topic, envelope.m, mark);
}

class RedisEventBus implements RedisEventBusLike {
  readonly distributed = true;
  private readonly local = new LocalSubscribers();
  private readonly counts = new TopicSubscriptions();
  private readonly origin = randomBytes(9).toString('base64url');
  private readonly positions = new BusPositions(this.origin);
  private readonly receiver = { origin: this.origin, positions: this.positions, local: this.local };
  private readonly channelPrefix: string;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    prefix: string,
  ) {
    this.channelPrefix = `${prefix}bus:`;
    subscriber.on('message', (channel: string, text: string) => this.receive(channel, text));
    // 'ready' again after the first: the subscriber connection was lost and is back. Whatever was published
    // meanwhile never reached this process, on any topic. ioredis re-subscribes right after emitting it; the
    // PING's answer follows the re-subscriptions', so the gaps are reported once messages flow again.
    let connected = subscriber.status === 'ready';
    subscriber.on('ready', () => {
      if (!connected) {
        connected = true;
        return;
      }
      setImmediate(() => {
        subscriber.ping().then(
          () => this.reconnected(),
          () => this.reconnected(),
        );
      });
    });
  }

  /** Every subscribed topic has a gap; continuity with each publisher restarts at its next message. */
  private reconnected(): void {
    this.positions.resync();
    for (const topic of this.local.gapTopics()) this.local.gap({ topic, reason: 'reconnect' });
  }

  private receive(channel: string, text: string): void {
    if (!channel.startsWith(this.channelPrefix)) return;
    deliverReceived(this.receiver, channel.slice(this.channelPrefix.length), text, (origin) => origin);
  }

  onGap(topic: string, handler: GapHandler): () => void {
    return this.local.addGap(topic, handler);
  }

  async publish<T>(topic: string, message: T, _shardKey?: string): Promise<void> {
    // Numbered, delivered locally and handed to the connection in one synchronous step: the publisher
    // connection keeps command order, so every process receives this origin's messages in number order.
    const mark = this.positions.next(topic);
    const text = JSON.stringify({ o: this.origin, n: mark.n, m: message } satisfies Envelope);
    this.local.deliver(topic, message, mark);
    await this.publisher.publish(this.channelPrefix + topic, text);
  }

  position(topic: string): Record<string, number> {
    return this.positions.position(topic);
  }

  subscribe<T>(topic: string, handler: BusHandler<T>): () => void {
    const remove = this.local.add(topic, handler);
    return this.counts.add(
      topic,
      () => {
        this.subscriber.subscribe(this.channelPrefix + topic).catch(() => {});
      },
      () => {
        remove();
      },
      () => {
        // What is published while nobody here listens is not lost: a later subscription starts afresh.
        this.positions.resync(topic);
        this.subscriber.unsubscribe(this.channelPrefix + topic).catch(() => {});
      },
    );
  }

  async ready(): Promise<void> {
    // Replies come in command order on the subscriber connection, so the PONG follows every SUBSCRIBE ack.
    await this.subscriber.ping();
  }

  async close(): Promise<void> {}
}

/** Shards of a topic on a cluster: events of one guild always travel on the same one. */
export const BUS_SHARDS = 16;
/** The stream of messages published without a shard key. */
const UNSHARDED = 'g';

/**
 * The hash tag of a bus shard. Shard k's tag hashes into the k-th of `BUS_SHARDS` equal slot ranges, so a
 * cluster whose masters hold equal ranges (what `redis-cli --cluster create` makes) gets an even share of the
 * shards. Found by a deterministic search: every process derives the same tags.
 */
function shardTag(stream: string): string {
  if (stream === UNSHARDED) return 'bus:g';
  const k = Number(stream);
  const low = Math.floor((k * CLUSTER_SLOTS) / BUS_SHARDS);
  const high = Math.floor(((k + 1) * CLUSTER_SLOTS) / BUS_SHARDS);
  for (let i = 0; ; i++) {
    const tag = `bus:${k}.${i}`;
    const slot = keySlot(`{${tag}}`);
    if (slot >= low && slot < high) return tag;
  }
}

const STREAMS = [...Array.from({ length: BUS_SHARDS }, (_, k) => String(k)), UNSHARDED];
const SHARD_TAGS = new Map(STREAMS.map((stream) => [stream, shardTag(stream)]));

/** The shard a message with `shardKey` (a guild id) travels on; messages without one use their own stream. */
export function busStream(shardKey: string | undefined): string {
  return shardKey === undefined ? UNSHARDED : String(bucketOf(shardKey, BUS_SHARDS));
}

/** The sharded pub/sub channel of a topic's stream (docs/deployment.md#redis-cluster). */
export function shardChannel(prefix: string, topic: string, stream: string): string {
  return `${prefix}bus:{${SHARD_TAGS.get(stream)}}:${topic}`;
}

/**
 * The event bus on a Redis/Valkey cluster, over sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis ≥ 7): a message
 * reaches only the master owning its channel's slot instead of being broadcast to every node, so fan-out
 * traffic splits across the masters. Each topic has one channel per shard plus one for messages without a
 * shard key; a subscriber listens to all of them, through one connection per master that owns one.
 *
 * Only messages of one shard travel one ordered path (publisher → master → subscriber), so each publisher
 * numbers its messages per shard, and marks name the shard (`streamOrigin`): positions, resume and gap
 * detection work per shard exactly as the single-server bus does per topic.
 */
class RedisShardedEventBus implements RedisEventBusLike {
  readonly distributed = true;
  private readonly local = new LocalSubscribers();
  private readonly counts = new TopicSubscriptions();
  private readonly origin = randomBytes(9).toString('base64url');
  private readonly positions = new BusPositions(this.origin);
  private readonly receiver = { origin: this.origin, positions: this.positions, local: this.local };
  /** Every channel subscribed to → what it carries. */
  private readonly channels = new Map<string, { topic: string; stream: string }>();
  /** Subscribed channel → the master (node key `host:port`) it is subscribed on; absent while unknown. */
  private readonly routes = new Map<string, string>();
  /** Master node key → this process's bus connection to it. */
  private readonly connections = new Map<string, Redis>();
  private closed = false;

  constructor(
    private readonly cluster: Cluster,
    private readonly connectionOptions: RedisOptions,
    private readonly prefix: string,
  ) {
    // The cluster client refreshes its slot map on redirections, failures and periodically: a channel whose
    // slot moved to another master is subscribed there.
    cluster.on('refresh', () => this.reroute());
  }

  private owner(channel: string): string | undefined {
    return this.cluster.slots[keySlot(channel)]?.[0];
  }

  private connection(node: string): Redis {
    const existing = this.connections.get(node);
    if (existing) return existing;
    const separator = node.lastIndexOf(':');
    const connection = new Redis({
      ...this.connectionOptions,
      host: node.slice(0, separator),
      port: Number(node.slice(separator + 1)),
      maxRetriesPerRequest: 3,
      // Named like the single-server bus connection, so an operator (or a test) finds it in CLIENT LIST.
      connectionName: `${this.prefix.replace(/[^\w:.-]/g, '_')}bus`,
    });
    connection.on('error', () => {});
    connection.on('smessage', (channel: string, text: string) => this.receive(channel, text));
    // SSUBSCRIBE answered MOVED, or the server dropped our subscription (its slot migrated).
    connection.on('moved', () => this.cluster.refreshSlotsCache());
    // 'ready' again after the first: this connection was lost and is back (ioredis subscribes again right
    // after emitting it). What its master carried meanwhile never arrived; the gap is reported once the
    // re-subscriptions are answered, as on one server.
    let connected = false;
    connection.on('ready', () => {
      if (!connected) {
        connected = true;
        return;
      }
      setImmediate(() => {
        connection.ping().then(
          () => this.reconnected(),
          () => this.reconnected(),
        );
      });
    });
    this.connections.set(node, connection);
    return connection;
  }

  private listen(channel: string): void {
    const node = this.owner(channel);
    if (node === undefined) return;
    this.routes.set(channel, node);
    this.connection(node)
      .ssubscribe(channel)
      .catch(() => {});
  }

  /** Moves subscriptions whose slot changed master; what was published meanwhile may be lost (a gap). */
  private reroute(): void {
    if (this.closed) return;
    const moved: Redis[] = [];
    for (const channel of this.channels.keys()) {
      const node = this.owner(channel);
      const current = this.routes.get(channel);
      // An unknown owner (a slot map being rebuilt) keeps the subscription where it is.
      if (node === undefined || node === current) continue;
      if (current !== undefined)
        this.connections
          .get(current)
          ?.sunsubscribe(channel)
          .catch(() => {});
      this.listen(channel);
      moved.push(this.connection(node));
    }
    const used = new Set(this.routes.values());
    for (const [node, connection] of this.connections) {
      if (used.has(node)) continue;
      this.connections.delete(node);
      connection.quit().catch(() => {});
    }
    if (moved.length > 0)
      Promise.allSettled(moved.map((connection) => connection.ping())).then(() => this.reconnected());
  }

  private reconnected(): void {
    if (this.closed) return;
    this.positions.resync();
    for (const topic of this.local.gapTopics()) this.local.gap({ topic, reason: 'reconnect' });
  }

  private receive(channel: string, text: string): void {
    const carried = this.channels.get(channel);
    if (!carried) return;
    deliverReceived(this.receiver, carried.topic, text, (origin) => streamOrigin(origin, carried.stream));
  }

  onGap(topic: string, handler: GapHandler): () => void {
    return this.local.addGap(topic, handler);
  }

  async publish<T>(topic: string, message: T, shardKey?: string): Promise<void> {
    const stream = busStream(shardKey);
    const mark = this.positions.next(topic, stream);
    const text = JSON.stringify({ o: this.origin, n: mark.n, m: message } satisfies Envelope);
    this.local.deliver(topic, message, mark);
    // The cluster client keeps one connection per master, so one shard's messages keep their order.
    await this.cluster.spublish(shardChannel(this.prefix, topic, stream), text);
  }

  position(topic: string): Record<string, number> {
    return this.positions.position(topic);
  }

  subscribe<T>(topic: string, handler: BusHandler<T>): () => void {
    const remove = this.local.add(topic, handler);
    return this.counts.add(
      topic,
      () => {
        for (const stream of STREAMS) {
          const channel = shardChannel(this.prefix, topic, stream);
          this.channels.set(channel, { topic, stream });
          this.listen(channel);
        }
      },
      () => {
        remove();
      },
      () => {
        this.positions.resync(topic);
        for (const stream of STREAMS) {
          const channel = shardChannel(this.prefix, topic, stream);
          this.channels.delete(channel);
          const node = this.routes.get(channel);
          this.routes.delete(channel);
          if (node !== undefined)
            this.connections
              .get(node)
              ?.sunsubscribe(channel)
              .catch(() => {});
        }
      },
    );
  }

  async ready(): Promise<void> {
    // Per connection, the PONG follows every SSUBSCRIBE sent on it before.
    await Promise.all([...this.connections.values()].map((connection) => connection.ping()));
  }

  async close(): Promise<void> {}

  async shutdown(): Promise<void> {
    this.closed = true;
    const connections = [...this.connections.values()];
    this.connections.clear();
    await Promise.allSettled(connections.map((connection) => connection.quit()));
  }
}

/**
 * Shared state on Redis/Valkey: rate-limit buckets, failure counters, automatic bans and the event bus.
 * Fails at start (not at the first request) when the server does not answer.
 */
export async function openRedisState(url: string, prefix: string): Promise<RedisState> {
  const client = connect(url);
  // Named so an operator (or a test) can tell a process's bus connection in CLIENT LIST.
  const subscriber = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 3,
    connectionName: `${prefix.replace(/[^\w:.-]/g, '_')}bus`,
  });
  subscriber.on('error', () => {});
  try {
    await client.connect();
    await subscriber.connect();
  } catch (error) {
    client.disconnect();
    subscriber.disconnect();
    throw new Error(`REDIS_URL: cannot connect (${(error as Error).message})`);
  }
  const bus = new RedisEventBus(client, subscriber, prefix);
  return {
    ...stores(singleServer(client), prefix),
    bus,
    async close() {
      await Promise.allSettled([subscriber.quit(), client.quit()]);
    },
  };
}

function stores(keyspace: RedisKeyspace, prefix: string): Omit<RedisState, 'bus' | 'close'> {
  return {
    rateLimiter: new RedisRateLimiter(keyspace, prefix),
    ipBans: new RedisIpBanStore(keyspace, prefix),
    voiceStates: new RedisVoiceStateStore(keyspace, prefix),
    voiceNodes: new RedisVoiceNodeStore(keyspace, prefix),
    presences: new RedisPresenceStore(keyspace, prefix),
    slots: new RedisSlotStore(keyspace, prefix),
  };
}

/**
 * Shared state on a Redis/Valkey cluster (docs/deployment.md#redis-cluster): `nodes` are seed URLs
 * (`redis://[user:password@]host:port`, as the configuration normalises them); the rest of the cluster is
 * discovered from them. Credentials and TLS of the first seed apply to every node.
 */
export async function openRedisClusterState(nodes: readonly string[], prefix: string): Promise<RedisState> {
  const seeds = nodes.map((node) => new URL(node));
  const first = seeds[0];
  if (!first) throw new Error('REDIS_CLUSTER_NODES: no node given');
  const connectionOptions: RedisOptions = {};
  if (first.username) connectionOptions.username = decodeURIComponent(first.username);
  if (first.password) connectionOptions.password = decodeURIComponent(first.password);
  if (first.protocol === 'rediss:') connectionOptions.tls = {};
  const cluster = new Cluster(
    seeds.map((seed) => ({ host: seed.hostname, port: Number(seed.port) })),
    {
      lazyConnect: true,
      redisOptions: { ...connectionOptions, maxRetriesPerRequest: 3 },
      // Commands issued in the same tick are sent to each master as one pipeline (the stores' batches).
      enableAutoPipelining: true,
      // A failover is noticed even when no command is redirected.
      slotsRefreshInterval: 5_000,
    },
  );
  withScripts(cluster as unknown as ScriptedRedis);
  try {
    await cluster.connect();
  } catch (error) {
    cluster.disconnect();
    throw new Error(`REDIS_CLUSTER_NODES: cannot connect (${(error as Error).message})`);
  }
  const bus = new RedisShardedEventBus(cluster, connectionOptions, prefix);
  return {
    ...stores(clusterKeyspace(cluster), prefix),
    bus,
    async close() {
      await bus.shutdown();
      await cluster.quit().catch(() => {});
    },
  };
}

/**
 * How many local subscriptions each topic has, for the Redis buses: the first subscribes on Redis (`first`),
 * and the Redis subscription goes after the last one is removed (`last`). Each returned function removes its one
 * subscription once (`removeOne`), however often it is called.
 */
class TopicSubscriptions {
  private readonly counts = new Map<string, number>();

  add(topic: string, first: () => void, removeOne: () => void, last: () => void): () => void {
    const count = (this.counts.get(topic) ?? 0) + 1;
    this.counts.set(topic, count);
    if (count === 1) first();
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      removeOne();
      const left = (this.counts.get(topic) ?? 1) - 1;
      if (left > 0) {
        this.counts.set(topic, left);
        return;
      }
      this.counts.delete(topic);
      last();
    };
  }
}
