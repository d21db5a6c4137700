import type { Database, Queryable } from '../../platform/db/database.ts';
import type { MessageView } from '../chat/views.ts';
import type { CommandPermission } from './command-permissions.ts';
import type { CommandRow } from './commands.ts';

const COMMAND_COLUMNS = 'id, application_id, guild_id, type, name, body, version';

export interface IndexedApplication {
  id: string;
  name: string;
  icon: string | null;
  description: string | null;
  bot_user_id: string;
}

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
  ephemeral_message: MessageView | null;
  command_name: string | null;
  /** The invoked command's type (1 slash, 2 user, 3 message), and a user or message command's target. */
  command_type: number | null;
  target_id: string | null;
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

  /** Applications installed in a guild: those whose bot is a member. */
  installedInGuild(guildId: string): Promise<IndexedApplication[]> {
    return this.db.query<IndexedApplication>(
      `SELECT a.id, a.name, a.icon, a.description, a.bot_user_id FROM applications a
         JOIN members m ON m.guild_id = $1 AND m.user_id = a.bot_user_id
        ORDER BY a.id`,
      [guildId],
    );
  }

  /** Applications whose bot is one of these users (a DM's recipients). */
  withBots(userIds: readonly string[]): Promise<IndexedApplication[]> {
    return this.db.query<IndexedApplication>(
      `SELECT id, name, icon, description, bot_user_id FROM applications
        WHERE bot_user_id = ANY($1::bigint[]) ORDER BY id`,
      [userIds],
    );
  }

  /** The commands of these applications usable in `guildId` (its guild commands and the global ones). */
  commandsIn(applicationIds: readonly string[], guildId: string | null): Promise<CommandRow[]> {
    return this.db.query<CommandRow>(
      `SELECT ${COMMAND_COLUMNS} FROM application_commands
        WHERE application_id = ANY($1::bigint[]) AND (guild_id IS NULL OR guild_id = $2)
        ORDER BY application_id, type, name`,
      [applicationIds, guildId],
    );
  }

  /** Every permission list of these applications in a guild, keyed by command id (or application id). */
  async permissionLists(applicationIds: readonly string[], guildId: string): Promise<Map<string, CommandPermission[]>> {
    const rows = await this.db.query<{ command_id: string; permissions: CommandPermission[] }>(
      `SELECT command_id, permissions FROM application_command_permissions
        WHERE application_id = ANY($1::bigint[]) AND guild_id = $2`,
      [applicationIds, guildId],
    );
    return new Map(rows.map((r) => [String(r.command_id), r.permissions]));
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

  /**
   * `PUT`'s upsert of a whole list in one statement: a command of the same type and name keeps its id (the
   * unique index decides), the others are inserted with the given ids. Rows come back in the list's order.
   */
  async upsertMany(
    db: Queryable,
    applicationId: string,
    guildId: string | null,
    commands: { id: string; type: number; name: string; body: Record<string, unknown>; version: string }[],
  ): Promise<CommandRow[]> {
    if (commands.length === 0) return [];
    const rows = await db.query<CommandRow>(
      `INSERT INTO application_commands (id, application_id, guild_id, type, name, body, version)
       SELECT t.id, $1, $2, t.type, t.name, t.body, t.version
         FROM unnest($3::bigint[], $4::smallint[], $5::text[], $6::jsonb[], $7::bigint[])
              AS t(id, type, name, body, version)
       ON CONFLICT (application_id, COALESCE(guild_id, 0), type, name)
       DO UPDATE SET body = EXCLUDED.body, version = EXCLUDED.version
       RETURNING ${COMMAND_COLUMNS}`,
      [
        applicationId,
        guildId,
        commands.map((c) => c.id),
        commands.map((c) => c.type),
        commands.map((c) => c.name),
        commands.map((c) => JSON.stringify(c.body)),
        commands.map((c) => c.version),
      ],
    );
    const byKey = new Map(rows.map((r) => [`${r.type}:${r.name}`, r]));
    return commands.map((c) => byKey.get(`${c.type}:${c.name}`) as CommandRow);
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
  ): Promise<{ command_id: string; permissions: CommandPermission[] }[]> {
    return this.db.query(
      'SELECT command_id, permissions FROM application_command_permissions WHERE application_id = $1 AND guild_id = $2',
      [applicationId, guildId],
    );
  }

  async commandPermissions(
    applicationId: string,
    guildId: string,
    commandId: string,
  ): Promise<CommandPermission[] | undefined> {
    const [row] = await this.db.query<{ permissions: CommandPermission[] }>(
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
    permissions: CommandPermission[],
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
                                 created_at, expires_at, command_name, command_type, target_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
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
        row.command_type,
        row.target_id,
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

  /**
   * An interaction whose endpoint failed: its token dies now (callback, follow-ups and edits answer
   * `UNKNOWN_INTERACTION`), unless a response came in first.
   */
  async fail(id: string, at: Date): Promise<void> {
    await this.db.query(
      'UPDATE interactions SET expires_at = LEAST(expires_at, $2) WHERE id = $1 AND responded_at IS NULL',
      [id, at],
    );
  }

  async setOriginal(id: string, messageId: string | null, ephemeral: Record<string, unknown> | null): Promise<void> {
    await this.db.query(
      'UPDATE interactions SET original_message_id = $2, ephemeral_message = $3::jsonb WHERE id = $1',
      [id, messageId, ephemeral ? JSON.stringify(ephemeral) : null],
    );
  }
}
