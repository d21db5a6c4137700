import type { Database, Queryable } from '../../platform/db/database.ts';
import type { CommandRow } from './commands.ts';

const COMMAND_COLUMNS = 'id, application_id, guild_id, type, name, body, version';

export interface InteractionRow {
  id: string;
  application_id: string;
  token_hash: string;
  type: number;
  user_id: string;
  channel_id: string;
  guild_id: string | null;
  message_id: string | null;
  responded_at: Date | null;
  response_type: number | null;
  original_message_id: string | null;
  ephemeral_message: Record<string, unknown> | null;
  command_name: string | null;
  modal_custom_id: string | null;
  created_at: Date;
  expires_at: Date;
}

/** The SQL of application commands, their guild permissions and interactions (docs/bots.md). */
export class InteractionsStore {
  constructor(readonly db: Database) {}

  commands(applicationId: string, guildId: string | null, db: Queryable = this.db): Promise<CommandRow[]> {
    return db.query<CommandRow>(
      `SELECT ${COMMAND_COLUMNS} FROM application_commands
        WHERE application_id = $1 AND guild_id IS NOT DISTINCT FROM $2 ORDER BY id`,
      [applicationId, guildId],
    );
  }

  async command(applicationId: string, guildId: string | null, id: string): Promise<CommandRow | undefined> {
    const [row] = await this.db.query<CommandRow>(
      `SELECT ${COMMAND_COLUMNS} FROM application_commands
        WHERE application_id = $1 AND guild_id IS NOT DISTINCT FROM $2 AND id = $3`,
      [applicationId, guildId, id],
    );
    return row;
  }

  /** A command a person may invoke in `guildId` (a guild command there, or a global one). */
  async invocable(applicationId: string, guildId: string | null, id: string): Promise<CommandRow | undefined> {
    const [row] = await this.db.query<CommandRow>(
      `SELECT ${COMMAND_COLUMNS} FROM application_commands
        WHERE application_id = $1 AND id = $2 AND (guild_id IS NULL OR guild_id = $3)`,
      [applicationId, id, guildId],
    );
    return row;
  }

  async countOfType(applicationId: string, guildId: string | null, type: number, db: Queryable): Promise<number> {
    const [row] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM application_commands
        WHERE application_id = $1 AND guild_id IS NOT DISTINCT FROM $2 AND type = $3`,
      [applicationId, guildId, type],
    );
    return row?.n ?? 0;
  }

  /** Insert, or replace the command of the same type and name (Discord's POST upserts by name). */
  async upsert(
    db: Queryable,
    command: { id: string; applicationId: string; guildId: string | null; type: number; name: string },
    body: Record<string, unknown>,
    version: string,
  ): Promise<{ row: CommandRow; created: boolean }> {
    const [existing] = await db.query<{ id: string }>(
      `SELECT id FROM application_commands
        WHERE application_id = $1 AND guild_id IS NOT DISTINCT FROM $2 AND type = $3 AND name = $4 FOR UPDATE`,
      [command.applicationId, command.guildId, command.type, command.name],
    );
    if (existing) {
      const [row] = await db.query<CommandRow>(
        `UPDATE application_commands SET body = $2::jsonb, version = $3 WHERE id = $1 RETURNING ${COMMAND_COLUMNS}`,
        [existing.id, JSON.stringify(body), version],
      );
      return { row: row as CommandRow, created: false };
    }
    const [row] = await db.query<CommandRow>(
      `INSERT INTO application_commands (id, application_id, guild_id, type, name, body, version)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7) RETURNING ${COMMAND_COLUMNS}`,
      [command.id, command.applicationId, command.guildId, command.type, command.name, JSON.stringify(body), version],
    );
    return { row: row as CommandRow, created: true };
  }

  async update(
    id: string,
    name: string,
    type: number,
    body: Record<string, unknown>,
    version: string,
  ): Promise<CommandRow | undefined> {
    const [row] = await this.db.query<CommandRow>(
      `UPDATE application_commands SET name = $2, type = $3, body = $4::jsonb, version = $5 WHERE id = $1
       RETURNING ${COMMAND_COLUMNS}`,
      [id, name, type, JSON.stringify(body), version],
    );
    return row;
  }

  async remove(applicationId: string, guildId: string | null, id: string): Promise<boolean> {
    const rows = await this.db.query(
      `DELETE FROM application_commands WHERE application_id = $1 AND guild_id IS NOT DISTINCT FROM $2 AND id = $3
       RETURNING 1`,
      [applicationId, guildId, id],
    );
    return rows.length === 1;
  }

  async removeExcept(db: Queryable, applicationId: string, guildId: string | null, keep: string[]): Promise<void> {
    await db.query(
      `DELETE FROM application_commands
        WHERE application_id = $1 AND guild_id IS NOT DISTINCT FROM $2 AND NOT (id = ANY($3::bigint[]))`,
      [applicationId, guildId, keep],
    );
  }

  permissions(
    applicationId: string,
    guildId: string,
  ): Promise<{ command_id: string; permissions: Record<string, unknown>[] }[]> {
    return this.db.query(
      'SELECT command_id, permissions FROM application_command_permissions WHERE application_id = $1 AND guild_id = $2',
      [applicationId, guildId],
    );
  }

  async commandPermissions(
    applicationId: string,
    guildId: string,
    commandId: string,
  ): Promise<Record<string, unknown>[] | undefined> {
    const [row] = await this.db.query<{ permissions: Record<string, unknown>[] }>(
      `SELECT permissions FROM application_command_permissions
        WHERE application_id = $1 AND guild_id = $2 AND command_id = $3`,
      [applicationId, guildId, commandId],
    );
    return row?.permissions;
  }

  async setPermissions(
    applicationId: string,
    guildId: string,
    commandId: string,
    permissions: Record<string, unknown>[],
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO application_command_permissions (application_id, guild_id, command_id, permissions)
       VALUES ($1, $2, $3, $4::jsonb)
       ON CONFLICT (application_id, guild_id, command_id) DO UPDATE SET permissions = EXCLUDED.permissions`,
      [applicationId, guildId, commandId, JSON.stringify(permissions)],
    );
  }

  async createInteraction(
    row: Omit<
      InteractionRow,
      'responded_at' | 'response_type' | 'original_message_id' | 'ephemeral_message' | 'modal_custom_id'
    >,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO interactions (id, application_id, token_hash, type, user_id, channel_id, guild_id, message_id,
                                 created_at, expires_at, command_name)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        row.id,
        row.application_id,
        row.token_hash,
        row.type,
        row.user_id,
        row.channel_id,
        row.guild_id,
        row.message_id,
        row.created_at,
        row.expires_at,
        row.command_name,
      ],
    );
  }

  /** Whether this person was shown the application's modal `customId` in the channel, within 15 minutes. */
  async modalShown(applicationId: string, userId: string, channelId: string, customId: string, now: number) {
    const rows = await this.db.query(
      `SELECT 1 FROM interactions WHERE application_id = $1 AND user_id = $2 AND channel_id = $3
          AND modal_custom_id = $4 AND expires_at > $5 LIMIT 1`,
      [applicationId, userId, channelId, customId, new Date(now)],
    );
    return rows.length === 1;
  }

  async interactionByToken(tokenHash: string): Promise<InteractionRow | undefined> {
    const [row] = await this.db.query<InteractionRow>('SELECT * FROM interactions WHERE token_hash = $1', [tokenHash]);
    return row;
  }

  /** Records the initial response once: false when another response came first. */
  async markResponded(id: string, type: number, at: Date): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE interactions SET responded_at = $3, response_type = $2 WHERE id = $1 AND responded_at IS NULL
       RETURNING 1`,
      [id, type, at],
    );
    return rows.length === 1;
  }

  async setOriginal(id: string, messageId: string | null, ephemeral: Record<string, unknown> | null): Promise<void> {
    await this.db.query(
      'UPDATE interactions SET original_message_id = $2, ephemeral_message = $3::jsonb WHERE id = $1',
      [id, messageId, ephemeral ? JSON.stringify(ephemeral) : null],
    );
  }
}
