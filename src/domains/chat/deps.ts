import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { snowflakeField as snowflake } from '../../http/fields.ts';
import type { RateLimitSpec } from '../../http/route.ts';
import type { Access } from './access.ts';
import type { ChatEvents } from './events.ts';
import type { AuditRecorder } from './guild-audit.ts';
import type { MessageService } from './message-service.ts';
import type { ChatStore } from './store.ts';

/**
 * The composition root's services the chat routes use beyond the chat core itself
 * (docs/architecture.md#narrow-dependencies).
 */
export type ChatServices = Pick<
  AppServices,
  'attachments' | 'chatCore' | 'db' | 'ids' | 'media' | 'objects' | 'rateLimiter' | 'readReplica' | 'voice'
>;

/** What every chat route factory uses; built once by `chatRoutes`. */
export interface ChatDeps {
  services: ChatServices;
  store: ChatStore;
  access: Access;
  events: ChatEvents;
  messages: MessageService;
  audit: AuditRecorder;
}

/** Route buckets of docs/conventions.md#rate-limits (per identity; names carry the resource so each has its own bucket). */
export const limits = {
  read: (name: string): RateLimitSpec => ({ bucket: `${name}:read`, limit: 100, windowSeconds: 10 }),
  write: (name: string): RateLimitSpec => ({ bucket: `${name}:write`, limit: 20, windowSeconds: 10 }),
  create: (name: string): RateLimitSpec => ({ bucket: `${name}:create`, limit: 10, windowSeconds: 60 }),
  reactions: { bucket: 'channel:reactions', limit: 30, windowSeconds: 10 } satisfies RateLimitSpec,
  inviteAccept: { bucket: 'invites:accept', limit: 10, windowSeconds: 10 } satisfies RateLimitSpec,
};

export { nullableText, permissionBitsField as bitfield } from '../../http/fields.ts';
export { snowflake };

/** Cursor pagination for lists ordered by snowflake. */
export const cursorQuery = (maxLimit: number, defaultLimit: number) =>
  z.object({
    before: snowflake.optional(),
    after: snowflake.optional(),
    limit: z.coerce.number().int().min(1).max(maxLimit).default(defaultLimit),
  });

/** A query flag as clients send it: `true`/`false` or `1`/`0`. */
export const booleanQuery = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1');

/**
 * A guild's member and presence counts (invites, `with_counts`): the presences come from the shared presence
 * store through the composition root's hook.
 */
export async function guildCounts(store: ChatStore, guildId: string): Promise<{ members: number; presences: number }> {
  const [members, presences] = await Promise.all([store.memberCount(guildId), store.presencesOf?.(guildId) ?? []]);
  return { members, presences: presences.length };
}
