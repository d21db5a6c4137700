import { once } from 'node:events';
import { createGzip, type Gzip } from 'node:zlib';
import { snowflakeTimestamp } from '../../platform/crypto/snowflake.ts';
import type { HarvestMessage, HarvestSource } from './harvest-source.ts';

/** The archive's media type and file name suffix: gzip-compressed JSON Lines (docs/accounts.md#your-data-data-export). */
export const HARVEST_CONTENT_TYPE = 'application/gzip';
export const HARVEST_FILE_SUFFIX = '.jsonl.gz';
export const HARVEST_FORMAT_VERSION = 1;

export interface HarvestLimits {
  /** Messages read per query. */
  pageSize: number;
  /** Messages written at most; beyond, the archive says `truncated`. */
  maxMessages: number;
  /** Compressed bytes at most (the archive is held in memory before it is stored). */
  maxBytes: number;
}

export const DEFAULT_HARVEST_LIMITS: HarvestLimits = {
  pageSize: 500,
  maxMessages: 200_000,
  maxBytes: 64 * 1024 * 1024,
};

/** Collects a gzip stream's output, respecting back-pressure and counting the compressed bytes. */
class GzipLines {
  private readonly gzip: Gzip = createGzip();
  private readonly chunks: Buffer[] = [];
  bytes = 0;

  constructor() {
    this.gzip.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.bytes += chunk.length;
    });
  }

  async line(record: Record<string, unknown>): Promise<void> {
    if (!this.gzip.write(`${JSON.stringify(record)}\n`)) await once(this.gzip, 'drain');
  }

  async finish(): Promise<Buffer> {
    const ended = once(this.gzip, 'end');
    this.gzip.end();
    await ended;
    return Buffer.concat(this.chunks);
  }

  destroy(): void {
    this.gzip.destroy();
  }
}

export interface ArchiveInput {
  harvestId: string;
  userId: string;
  now: number;
  /** Called between pages; throws when the build lost its claim (another process took the job over). */
  keepAlive: () => Promise<void>;
}

/**
 * Builds one account's archive: one JSON object per line, each with a `type` (`harvest`, `account`,
 * `relationships`, `guilds`, `saved_messages`, `message`, `attachment`, `channels`, `end`). Messages come
 * oldest first, each with its `channel_id`; `channels` lists every channel they were written in with a count,
 * so a reader can group them per channel. The last line, `end`, tells a complete archive from a cut one.
 */
export async function buildHarvestArchive(
  source: HarvestSource,
  input: ArchiveInput,
  limits: HarvestLimits = DEFAULT_HARVEST_LIMITS,
): Promise<Buffer> {
  const out = new GzipLines();
  try {
    const account = await source.account(input.userId);
    if (!account) throw new Error('harvest of an unknown user');
    await out.line({
      type: 'harvest',
      version: HARVEST_FORMAT_VERSION,
      harvest_id: input.harvestId,
      user_id: input.userId,
      generated_at: new Date(input.now).toISOString(),
    });
    await out.line({
      type: 'account',
      data: {
        ...account,
        settings: await source.settings(input.userId),
        connections: await source.connections(input.userId),
        sessions: await source.sessions(input.userId),
        notes: await source.notes(input.userId),
      },
    });
    await out.line({ type: 'relationships', data: await source.relationships(input.userId) });
    await out.line({ type: 'guilds', data: await source.guilds(input.userId) });
    await out.line({ type: 'saved_messages', data: await source.savedMessages(input.userId) });

    const perChannel = new Map<string, number>();
    let written = 0;
    let attachments = 0;
    let truncated = false;
    let after = '0';
    for (;;) {
      const want = Math.min(limits.pageSize, limits.maxMessages - written);
      if (want <= 0) {
        // One more row tells a full archive from one that reached the cap.
        truncated = (await source.messagePage(input.userId, after, 1)).length > 0;
        break;
      }
      const page = await source.messagePage(input.userId, after, want);
      for (const message of page) {
        await out.line({ type: 'message', data: messageRecord(message) });
        for (const attachment of message.attachments ?? []) {
          await out.line({ type: 'attachment', data: attachmentRecord(message, attachment) });
          attachments += 1;
        }
        perChannel.set(message.channel_id, (perChannel.get(message.channel_id) ?? 0) + 1);
        written += 1;
      }
      if (out.bytes > limits.maxBytes) {
        truncated = true;
        break;
      }
      if (page.length < want) break;
      after = (page.at(-1) as HarvestMessage).id;
      await input.keepAlive();
    }

    const channels = await source.channels([...perChannel.keys()]);
    const known = new Set(channels.map((c) => String(c.id)));
    await out.line({
      type: 'channels',
      data: [
        ...channels.map((c) => ({ ...c, message_count: perChannel.get(String(c.id)) ?? 0 })),
        // Messages of a channel deleted since keep their channel id; the channel itself is gone.
        ...[...perChannel.keys()]
          .filter((id) => !known.has(id))
          .map((id) => ({ id, deleted: true, message_count: perChannel.get(id) ?? 0 })),
      ],
    });
    await out.line({ type: 'end', message_count: written, attachment_count: attachments, truncated });
    return await out.finish();
  } catch (error) {
    out.destroy();
    throw error;
  }
}

function messageRecord(m: HarvestMessage): Record<string, unknown> {
  return {
    id: m.id,
    channel_id: m.channel_id,
    guild_id: m.guild_id,
    type: m.type,
    flags: m.flags,
    content: m.content,
    timestamp: new Date(snowflakeTimestamp(m.id)).toISOString(),
    edited_timestamp: m.edited_at,
    pinned: m.pinned_at !== null,
    tts: m.tts,
    attachments: m.attachments,
    embeds: m.embeds,
    sticker_ids: m.sticker_ids,
    message_reference: m.reference_message_id
      ? { message_id: m.reference_message_id, channel_id: m.reference_channel_id, guild_id: m.reference_guild_id }
      : null,
  };
}

function attachmentRecord(m: HarvestMessage, a: HarvestMessage['attachments'][number]): Record<string, unknown> {
  return {
    id: a.id ?? null,
    message_id: m.id,
    channel_id: m.channel_id,
    filename: a.filename ?? null,
    content_type: a.content_type ?? null,
    size: a.size ?? null,
    url: a.url ?? null,
  };
}
