import { z } from 'zod';
import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import type { AnyRoute } from '../../http/route.ts';
import { parseSnowflake, SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { testRoute } from './routes.ts';

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

/** Spreads seeds that share a millisecond over the sequence bits so their ids stay unique. */
let seedSequence = 0;

/** `POST /test/messages/seed` (api.md §7): back-dated messages whose ids encode the given timestamps. */
export function chatTestRoutes(services: AppServices): AnyRoute[] {
  const { db } = services;
  return [
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
