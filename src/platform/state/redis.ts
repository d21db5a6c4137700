import type { EventBus } from './event-bus.ts';
import type { IpBanStore } from './ip-bans.ts';
import type { RateLimiter } from './rate-limiter.ts';

export interface RedisState {
  bus: EventBus;
  rateLimiter: RateLimiter;
  ipBans: IpBanStore;
  close(): Promise<void>;
}

export async function openRedisState(_url: string): Promise<RedisState> {
  throw new Error('REDIS_URL: the Redis backend is not built yet');
}
