import type { Cluster, Redis } from 'ioredis';

/**
 * Where shared-state keys live: one Redis/Valkey server, or a cluster (docs/deployment.md#redis-cluster).
 * On a cluster every command and script touches keys of a single hash slot (else the server answers
 * CROSSSLOT), so keys that one command uses together carry the same hash tag `{…}` there; on one server
 * the historic key names stay as they were.
 */
export interface RedisKeyspace {
  /** The connection commands go through (an ioredis `Cluster` routes each command to its slot's master). */
  readonly client: Redis;
  readonly cluster: boolean;
  /** Every server holding keys now: the one server, or each master of the cluster (SCAN runs on each). */
  servers(): Redis[];
}

export function singleServer(client: Redis): RedisKeyspace {
  return { client, cluster: false, servers: () => [client] };
}

export function clusterKeyspace(cluster: Cluster): RedisKeyspace {
  // The stores use the commands both clients share; a Cluster routes them by key.
  return { client: cluster as unknown as Redis, cluster: true, servers: () => cluster.nodes('master') };
}

/** `name` inside a hash tag on a cluster (keys sharing the tag share a slot), `name` itself on one server. */
export function slotTag(keyspace: RedisKeyspace, name: string): string {
  return keyspace.cluster ? `{${name}}` : name;
}

/** Redis patterns treat `*?[]\` specially; a prefix is matched literally. */
export function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** Deletes every key matching `pattern` on every server (test harness resets). */
export async function deleteByPattern(keyspace: RedisKeyspace, pattern: string): Promise<void> {
  for (const server of keyspace.servers()) {
    let cursor = '0';
    do {
      const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (keys.length === 0) continue;
      // One key per command on a cluster: keys found on one master still span many slots.
      if (keyspace.cluster) await Promise.all(keys.map((key) => server.unlink(key)));
      else await server.unlink(...keys);
    } while (cursor !== '0');
  }
}

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** CRC16-XMODEM, the hash Redis Cluster maps keys to slots with. */
function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, 'utf8'))
    crc = ((crc << 8) ^ (CRC16_TABLE[((crc >> 8) ^ byte) & 0xff] ?? 0)) & 0xffff;
  return crc;
}

export const CLUSTER_SLOTS = 16384;

/** The cluster slot of a key or channel name, hash tags honoured (the Redis Cluster specification). */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return crc16(key.slice(open + 1, close)) % CLUSTER_SLOTS;
  }
  return crc16(key) % CLUSTER_SLOTS;
}

/** A stable, evenly spread number in [0, buckets) for an id (guild ids are snowflakes: low bits are not random). */
export function bucketOf(id: string, buckets: number): number {
  return crc16(id) % buckets;
}
