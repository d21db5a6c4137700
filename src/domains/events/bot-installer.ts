/**
 * Adds an application's bot to a guild: called by OAuth2 consent with the `bot` scope. The chat module
 * provides the real implementation; it checks `MANAGE_GUILD` for the installing user.
 */
export interface BotInstaller {
  install(input: {
    guildId: string;
    botUserId: string;
    applicationName: string;
    permissions: bigint;
    installedBy: string;
  }): Promise<void>;
}
