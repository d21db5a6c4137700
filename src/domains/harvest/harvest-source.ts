import type { Database } from '../../platform/db/database.ts';

/**
 * The reads a data export makes. Every list is bounded; messages are read in keyset pages on the author
 * index (`messages_author_idx`), never all at once. Columns are named one by one: a secret column added to a
 * table later cannot slip into an archive through a `SELECT *` (password hashes, token digests and second
 * factors are never read here).
 */
export class HarvestSource {
  constructor(private readonly db: Database) {}

  async account(userId: string): Promise<Record<string, unknown> | undefined> {
    const [row] = await this.db.query(
      `SELECT id, username, global_name, email, email_verified AS verified, avatar, banner, bio, pronouns,
              accent_color, locale, flags, date_of_birth, last_active_at,
              last_active_ip, created_at
         FROM users WHERE id = $1`,
      [userId],
    );
    return row;
  }

  async settings(userId: string): Promise<Record<string, unknown>> {
    const [row] = await this.db.query<{ settings: Record<string, unknown> }>(
      'SELECT settings FROM user_settings WHERE user_id = $1',
      [userId],
    );
    return row?.settings ?? {};
  }

  /** Linked single-sign-on identities: the provider and the subject, never a provider token. */
  async connections(userId: string): Promise<Record<string, unknown>[]> {
    return this.db.query(
      `SELECT provider_issuer, subject, created_at, last_login_at FROM sso_identities
        WHERE user_id = $1 ORDER BY created_at LIMIT 100`,
      [userId],
    );
  }

  /** Sessions without their token digest (which is also the session's public id). */
  async sessions(userId: string): Promise<Record<string, unknown>[]> {
    return this.db.query(
      `SELECT client_info, ip, created_at, last_used_at FROM sessions
        WHERE user_id = $1 ORDER BY created_at DESC LIMIT 1000`,
      [userId],
    );
  }

  async notes(userId: string): Promise<Record<string, unknown>[]> {
    return this.db.query(
      'SELECT target_id AS user_id, note FROM user_notes WHERE user_id = $1 ORDER BY target_id LIMIT 10000',
      [userId],
    );
  }

  async relationships(userId: string): Promise<Record<string, unknown>[]> {
    return this.db.query(
      `SELECT r.target_id AS id, r.type, r.nickname, r.since, u.username, u.global_name
         FROM relationships r JOIN users u ON u.id = r.target_id
        WHERE r.user_id = $1 ORDER BY r.since, r.target_id LIMIT 10000`,
      [userId],
    );
  }

  async guilds(userId: string): Promise<Record<string, unknown>[]> {
    return this.db.query(
      `SELECT g.id, g.name, (g.owner_id = m.user_id) AS owner, m.nick, m.joined_at
         FROM members m JOIN guilds g ON g.id = m.guild_id
        WHERE m.user_id = $1 ORDER BY m.joined_at, g.id LIMIT 1000`,
      [userId],
    );
  }

  async savedMessages(userId: string): Promise<Record<string, unknown>[]> {
    return this.db.query(
      `SELECT message_id, channel_id, guild_id, saved_at, notes, due_at FROM saved_messages
        WHERE user_id = $1 ORDER BY saved_at, message_id LIMIT 10000`,
      [userId],
    );
  }

  /** One page of the user's own messages, oldest first, after message `afterId`. */
  async messagePage(userId: string, afterId: string, limit: number): Promise<HarvestMessage[]> {
    return this.db.query<HarvestMessage>(
      `SELECT id, channel_id, guild_id, type, flags, content, edited_at, pinned_at, tts, attachments, embeds,
              sticker_ids, reference_message_id, reference_channel_id, reference_guild_id
         FROM messages WHERE author_id = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [userId, afterId, limit],
    );
  }

  /** Names and kinds of the channels the messages were written in; DMs with their recipients. */
  async channels(channelIds: readonly string[]): Promise<Record<string, unknown>[]> {
    if (channelIds.length === 0) return [];
    return this.db.query(
      `SELECT c.id, c.type, c.name, c.guild_id, c.parent_id,
              CASE WHEN c.guild_id IS NULL THEN
                (SELECT COALESCE(array_agg(d.user_id ORDER BY d.user_id), '{}') FROM dm_recipients d WHERE d.channel_id = c.id)
              END AS recipients
         FROM channels c WHERE c.id = ANY($1::bigint[]) ORDER BY c.id`,
      [channelIds],
    );
  }
}

export interface HarvestMessage {
  id: string;
  channel_id: string;
  guild_id: string | null;
  type: number;
  flags: number;
  content: string;
  edited_at: Date | null;
  pinned_at: Date | null;
  tts: boolean;
  attachments: { id?: string; filename?: string; url?: string; size?: number; content_type?: string }[];
  embeds: unknown[];
  sticker_ids: string[];
  reference_message_id: string | null;
  reference_channel_id: string | null;
  reference_guild_id: string | null;
}
