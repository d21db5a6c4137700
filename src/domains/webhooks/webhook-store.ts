import { constantTimeEqual, digest } from '../../platform/crypto/tokens.ts';
import type { Queryable } from '../../platform/db/database.ts';

export interface WebhookRow {
  id: string;
  guild_id: string;
  channel_id: string;
  creator_id: string | null;
  name: string;
  avatar: string | null;
  token_hash: string;
}

export const MAX_WEBHOOKS_PER_CHANNEL = 15;
const COLUMNS = 'id, guild_id, channel_id, creator_id, name, avatar, token_hash';

export class WebhookStore {
  constructor(private readonly db: Queryable) {}

  async byId(id: string): Promise<WebhookRow | undefined> {
    const [row] = await this.db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE id = $1`, [id]);
    return row;
  }

  /** A wrong token answers exactly like an unknown id; the digest compare takes constant time. */
  async byToken(id: string, token: string): Promise<WebhookRow | undefined> {
    const row = await this.byId(id);
    const given = digest(token);
    if (!row) {
      constantTimeEqual(given, given);
      return undefined;
    }
    return constantTimeEqual(row.token_hash, given) ? row : undefined;
  }

  async inChannel(channelId: string): Promise<WebhookRow[]> {
    return this.db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE channel_id = $1 ORDER BY id`, [channelId]);
  }

  async inGuild(guildId: string): Promise<WebhookRow[]> {
    return this.db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE guild_id = $1 ORDER BY id`, [guildId]);
  }
}
