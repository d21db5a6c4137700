import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { CommandIndex } from '../../../api/chat-types.ts';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice } from '../../../components/ErrorNotice.tsx';
import { useChat } from '../context.ts';
import { has } from '../permissions.ts';
import { bit, useGuildAdmin, useRun } from './shared.ts';

/**
 * The guild's bots (the applications installed in it) and the commands each offers here, from
 * `GET /guilds/{id}/application-command-index`: slash commands by their `/name`, user and message commands by
 * where a person finds them. Someone who may kick removes a bot (its member) from here.
 */
export function Bots({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const store = useChat();
  const admin = useGuildAdmin();
  const listId = useId();
  const [index, setIndex] = useState<CommandIndex | null>(null);
  const action = useRun();
  const canKick = has(store.permissions(undefined, guildId), bit('KICK_MEMBERS'));
  const load = () => action.run(async () => setIndex(await store.api.guildCommandIndex(guildId)));
  // biome-ignore lint/correctness/useExhaustiveDependencies: loaded once per guild
  useEffect(() => {
    void load();
  }, [guildId]);
  const commandLine = (command: CommandIndex['application_commands'][number]) =>
    command.type === 2
      ? `${command.name} (${t('guildSettings.commandOnUser')})`
      : command.type === 3
        ? `${command.name} (${t('guildSettings.commandOnMessage')})`
        : `/${command.name}${command.description ? ` — ${command.description}` : ''}`;
  return (
    <div>
      <p>{t('guildSettings.botsIntro')}</p>
      <ErrorNotice error={action.error} />
      {index && index.applications.length === 0 && <p>{t('guildSettings.noBots')}</p>}
      {index && index.applications.length > 0 && (
        <ul className="settings-list bot-list" id={listId} aria-label={t('guildSettings.botList')}>
          {index.applications.map((app) => {
            const commands = index.application_commands.filter((c) => c.application_id === app.id);
            return (
              <li key={app.id} className="bot-entry">
                <div className="grow">
                  <h3>{app.name}</h3>
                  {app.description && <p className="hint">{app.description}</p>}
                  {commands.length === 0 ? (
                    <p>{t('guildSettings.noCommands', { name: app.name })}</p>
                  ) : (
                    <ul aria-label={t('guildSettings.commandsOf', { name: app.name })}>
                      {commands.map((command) => (
                        <li key={command.id}>{commandLine(command)}</li>
                      ))}
                    </ul>
                  )}
                </div>
                {canKick && app.bot_id && (
                  <Button
                    variant="danger"
                    busy={action.busy}
                    onClick={async () => {
                      const botId = app.bot_id as string;
                      if (await action.run(() => admin.kick(guildId, botId))) await load();
                    }}
                  >
                    {t('guildSettings.removeBot', { name: app.name })}
                  </Button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
