import { ApiError } from '../../http/errors.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { BotInstaller } from '../events/bot-installer.ts';
import { GuildContext } from './access.ts';
import type { ChatEvents } from './events.ts';
import { AUDIT_LOG_EVENTS, type AuditRecorder } from './guild-audit.ts';
import { buildGuildPayload } from './guild-payload.ts';
import { ALL_PERMISSIONS, PERMISSIONS } from './permissions.ts';
import { MEMBER_COLUMNS, type MemberRow, ROLE_JSON, type RoleRow } from './rows.ts';
import type { ChatStore } from './store.ts';
import { memberView, roleView } from './views.ts';

/**
 * OAuth2 `bot` scope installation (docs/oauth2.md#oauth2-provider): the installing user needs MANAGE_GUILD; the bot joins with a
 * managed role carrying the requested permissions.
 */
export class ChatBotInstaller implements BotInstaller {
  constructor(
    private readonly store: ChatStore,
    private readonly events: ChatEvents,
    private readonly ids: SnowflakeGenerator,
    private readonly clock: Clock,
    private readonly audit: AuditRecorder,
  ) {}

  async install(input: {
    guildId: string;
    botUserId: string;
    applicationName: string;
    permissions: bigint;
    installedBy: string;
  }): Promise<void> {
    const now = this.clock.now();
    const bundle = await this.store.guildBundle(input.guildId, input.installedBy);
    if (!bundle) throw new ApiError('UNKNOWN_GUILD');
    if (!bundle.member) throw new ApiError('MISSING_PERMISSIONS');
    new GuildContext({ ...bundle, member: bundle.member }, input.installedBy, now).require(PERMISSIONS.MANAGE_GUILD);
    if (await this.store.isBanned(input.guildId, input.botUserId)) throw new ApiError('USER_BANNED_FROM_GUILD');
    const bot = await this.store.user(input.botUserId);
    if (!bot) throw new ApiError('UNKNOWN_USER');
    const roleId = this.ids.next();
    const result = await this.store.db.transaction(async (tx) => {
      const existing = await tx.query('SELECT 1 FROM members WHERE guild_id = $1 AND user_id = $2', [
        input.guildId,
        input.botUserId,
      ]);
      if (existing.length > 0) throw new ApiError('BOT_ALREADY_IN_GUILD');
      await tx.query('UPDATE roles SET position = position + 1 WHERE guild_id = $1 AND position >= 1', [input.guildId]);
      const [role] = await tx.query<{ j: RoleRow }>(
        `INSERT INTO roles AS r (id, guild_id, name, position, permissions, managed, bot_user_id)
         VALUES ($1, $2, $3, 1, $4, true, $5) RETURNING ${ROLE_JSON} AS j`,
        [
          roleId,
          input.guildId,
          input.applicationName.slice(0, 100),
          (input.permissions & ALL_PERMISSIONS).toString(),
          input.botUserId,
        ],
      );
      const [member] = await tx.query<MemberRow>(
        `INSERT INTO members AS m (guild_id, user_id, roles, joined_at) VALUES ($1, $2, ARRAY[$3::bigint], $4)
         RETURNING ${MEMBER_COLUMNS}`,
        [input.guildId, input.botUserId, roleId, new Date(now)],
      );
      return { role: (role as { j: RoleRow }).j, member: member as MemberRow };
    });
    await this.events.invalidate({ guildId: input.guildId });
    await this.events.invalidate({ guildId: input.guildId, userId: input.botUserId });
    await this.audit.record({
      guildId: input.guildId,
      action: AUDIT_LOG_EVENTS.BOT_ADD,
      userId: input.installedBy,
      targetId: input.botUserId,
    });
    await this.events.guild('GUILD_ROLE_CREATE', input.guildId, { role: roleView(result.role) });
    await this.events.guild('GUILD_MEMBER_ADD', input.guildId, memberView(result.member, bot));
    const payload = await buildGuildPayload(this.store, input.guildId, input.botUserId, now);
    if (payload) await this.events.users('GUILD_CREATE', [input.botUserId], payload);
  }
}
