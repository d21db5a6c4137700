import { randomBytes } from 'node:crypto';
import { after } from 'node:test';
import { openRedisClusterState, openRedisState, type RedisState } from '../../src/platform/state/redis.ts';
import { closeSharedRedisCluster, clusterSeeds, sharedRedisCluster, TEST_REDIS_CLUSTER } from './redis-cluster.ts';

export interface StateBackend<T> {
  name: string;
  open(): Promise<{ store: T; close(): Promise<void> }>;
}

/**
 * Where a shared-state contract suite runs: in process always, on Redis when TEST_REDIS_URL is set, and in that
 * leg on a three-master Redis cluster too (test/support/redis-cluster.ts). Each Redis store gets its own prefix.
 */
export function stateBackends<T>(inProcess: () => T, pick: (state: RedisState) => T): StateBackend<T>[] {
  const backends: StateBackend<T>[] = [
    { name: 'in-process', open: async () => ({ store: inProcess(), close: async () => {} }) },
  ];
  const prefix = () => `hearth-unit-${randomBytes(6).toString('hex')}:`;
  const redisUrl = process.env.TEST_REDIS_URL;
  if (redisUrl)
    backends.push({
      name: 'redis',
      async open() {
        const state = await openRedisState(redisUrl, prefix());
        return { store: pick(state), close: state.close };
      },
    });
  if (TEST_REDIS_CLUSTER) {
    after(closeSharedRedisCluster);
    backends.push({
      name: 'redis cluster',
      async open() {
        const state = await openRedisClusterState(clusterSeeds(await sharedRedisCluster()), prefix());
        return { store: pick(state), close: state.close };
      },
    });
  }
  return backends;
}
