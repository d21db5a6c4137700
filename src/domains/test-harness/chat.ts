import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import type { AnyRoute } from '../../http/route.ts';
import { parseSnowflake, SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { CHAT_INVALIDATE_TOPIC } from '../chat/events.ts';
import { testRoute } from './test-route.ts';

const seedBody = z.object({
  channel_id: z.union([z.string(), z.number()]).transform(String),
  author_id: z.union([z.string(), z.number()]).transform(String),
  messages: z
    .array(
      z.object({
        timestamp: z.union([z.string().min(1), z.number().int().min(0)]),
        content: z.string().max(4000),
      }),
    )
    .max(1000),
});

const memberSeedBody = z.object({ count: z.number().int().min(1).max(10_000) });

/** Spreads seeds that share a millisecond over the sequence bits so their ids stay unique. */
let seedSequence = 0;

/** What `chatTestRoutes` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type ChatTestRoutesDeps = Pick<AppServices, 'bus' | 'db' | 'ids' | 'users'>;

/**
 * `POST /test/messages/seed` (docs/accounts.md#test-harness-test-mode-only): back-dated messages whose ids encode
 * the given timestamps. `POST /test/guilds/{id}/members/seed`: `count` new accounts that cannot sign in (no email,
 * no password) join the guild, for the web client's scale benchmark (a real sign-up costs an argon2 hash each).
 */
export function chatTestRoutes(services: ChatTestRoutesDeps): AnyRoute[] {
  const { db } = services;
  return [
    testRoute({
      method: 'POST',
      path: '/test/guilds/:guildId/members/seed',
      body: memberSeedBody,
      async handler(ctx) {
        const guildId = parseSnowflake(ctx.params.guildId ?? '');
        if (!guildId.ok) throw new ApiError('UNKNOWN_GUILD');
        const [guild] = await db.query<{ id: string }>('SELECT id FROM guilds WHERE id = $1', [guildId.value]);
        if (!guild) throw new ApiError('UNKNOWN_GUILD');
        const ids = Array.from({ length: ctx.body.count }, () => services.ids.next());
        const now = new Date(ctx.now);
        await db.transaction(async (tx) => {
          await tx.query(
            `INSERT INTO users (id, username, global_name, email_verified, avatar_color, created_at)
             SELECT id, 'seed_' || id, NULL, false, 0, $2 FROM unnest($1::bigint[]) AS id`,
            [ids, now],
          );
          await tx.query(
            `INSERT INTO members (guild_id, user_id, joined_at) SELECT $1, id, $3 FROM unnest($2::bigint[]) AS id`,
            [guild.id, ids, now],
          );
        });
        await services.bus.publish(CHAT_INVALIDATE_TOPIC, { guildId: guild.id, members: true }, guild.id);
        return { user_ids: ids };
      },
    }),
    testRoute({
      method: 'POST',
      path: '/test/messages/seed',
      body: seedBody,
      async handler(ctx) {
        const channelId = parseSnowflake(ctx.body.channel_id);
        const authorId = parseSnowflake(ctx.body.author_id);
        if (!channelId.ok) throw new ApiError('UNKNOWN_CHANNEL');
        if (!authorId.ok) throw new ApiError('UNKNOWN_USER');
        const [channel] = await db.query<{ id: string; guild_id: string | null }>(
          'SELECT id, guild_id FROM channels WHERE id = $1',
          [channelId.value],
        );
        if (!channel) throw new ApiError('UNKNOWN_CHANNEL');
        if (!(await services.users.findById(authorId.value))) throw new ApiError('UNKNOWN_USER');
        const out: { message_id: string; timestamp: string }[] = [];
        for (const entry of ctx.body.messages) {
          const ms = typeof entry.timestamp === 'number' ? entry.timestamp : Date.parse(entry.timestamp);
          if (!Number.isFinite(ms)) throw new ApiError('BAD_REQUEST', { message: 'Invalid timestamp' });
          let id = '';
          for (let attempt = 0; attempt < 8; attempt++) {
            seedSequence = (seedSequence + 1) & 0xfff;
            id = SnowflakeGenerator.atTime(ms, seedSequence);
            const rows = await db.query(
              `INSERT INTO messages (id, channel_id, guild_id, author_id, content) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (id) DO NOTHING RETURNING id`,
              [id, channel.id, channel.guild_id, authorId.value, entry.content],
            );
            if (rows.length > 0) break;
          }
          out.push({ message_id: id, timestamp: new Date(ms).toISOString() });
        }
        await db.query(
          `UPDATE channels SET last_message_id = (SELECT max(id) FROM messages WHERE channel_id = $1) WHERE id = $1`,
          [channel.id],
        );
        return { messages: out };
      },
    }),
  ];
}
