import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type Channel, ChannelType, type PermissionOverwrite } from '../../../api/chat-types.ts';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice } from '../../../components/ErrorNotice.tsx';
import { Field } from '../../../components/Field.tsx';
import type { PermissionName } from '../../../lib/permissions.ts';
import { useChat } from '../context.ts';
import { sortedRoles } from './Roles.tsx';
import { bit, useGuildAdmin, useRun } from './shared.ts';

const SLOW_MODES = [0, 5, 10, 30, 60, 300, 900, 3600, 21600];
const OVERWRITE_PERMISSIONS: PermissionName[] = [
  'VIEW_CHANNEL',
  'SEND_MESSAGES',
  'READ_MESSAGE_HISTORY',
  'ADD_REACTIONS',
  'ATTACH_FILES',
  'MANAGE_MESSAGES',
  'CONNECT',
  'SPEAK',
];

/** Create text/voice channels and categories; rename, topic, slow mode, delete; role overwrites. */
export function Channels({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const store = useChat();
  const admin = useGuildAdmin();
  const [name, setName] = useState('');
  const [type, setType] = useState<number>(ChannelType.Text);
  const [selected, setSelected] = useState<string | null>(null);
  const action = useRun();
  const typeId = useId();
  const channels = store.guildChannels(guildId);
  const editing = selected ? store.channels.get(selected) : undefined;

  const create = async (event: FormEvent) => {
    event.preventDefault();
    await action.run(async () => {
      const channel = await admin.createChannel(guildId, { name: name.trim(), type });
      setName('');
      setSelected(channel.id);
    });
  };
  const typeName = (c: Channel) =>
    c.type === ChannelType.Voice
      ? t('guildSettings.voiceChannel')
      : c.type === ChannelType.Category
        ? t('guildSettings.category')
        : t('guildSettings.textChannel');

  return (
    <div className="channels-section">
      <form className="inline-form" onSubmit={create}>
        <Field
          label={t('guildSettings.newChannelName')}
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          maxLength={100}
        />
        <div className="field">
          <label htmlFor={typeId}>{t('guildSettings.channelType')}</label>
          <select id={typeId} value={type} onChange={(e) => setType(Number(e.target.value))}>
            <option value={ChannelType.Text}>{t('guildSettings.textChannel')}</option>
            <option value={ChannelType.Voice}>{t('guildSettings.voiceChannel')}</option>
            <option value={ChannelType.Category}>{t('guildSettings.category')}</option>
          </select>
        </div>
        <Button type="submit" busy={action.busy}>
          {t('guildSettings.createChannel')}
        </Button>
      </form>
      <ErrorNotice error={action.error} />
      <ul className="settings-list" aria-label={t('guildSettings.channelList')}>
        {channels.map((c) => (
          <li key={c.id} className={c.id === selected ? 'selected' : undefined}>
            <span className="grow">
              {c.type === ChannelType.Text ? '#' : ''}
              {c.name} <span className="muted-text">({typeName(c)})</span>
            </span>
            <button
              type="button"
              className="ghost small"
              onClick={() => setSelected(c.id)}
              aria-label={t('guildSettings.editChannel', { name: c.name ?? '' })}
            >
              {t('guildSettings.edit')}
            </button>
          </li>
        ))}
      </ul>
      {editing && (
        <>
          <ChannelEditor key={editing.id} channel={editing} onDeleted={() => setSelected(null)} />
          <OverwriteEditor key={`o${editing.id}`} guildId={guildId} channel={editing} />
        </>
      )}
    </div>
  );
}

function ChannelEditor({ channel, onDeleted }: { channel: Channel; onDeleted: () => void }) {
  const { t } = useTranslation();
  const admin = useGuildAdmin();
  const [name, setName] = useState(channel.name ?? '');
  const [topic, setTopic] = useState(channel.topic ?? '');
  const [slow, setSlow] = useState((channel as Channel & { rate_limit_per_user?: number }).rate_limit_per_user ?? 0);
  const [saved, setSaved] = useState(false);
  const action = useRun();
  const slowId = useId();
  const headingId = useId();
  const text = channel.type === ChannelType.Text;

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    setSaved(
      await action.run(() =>
        admin.editChannel(
          channel.id,
          text ? { name: name.trim(), topic: topic || null, rate_limit_per_user: slow } : { name: name.trim() },
        ),
      ),
    );
  };
  return (
    <form className="role-editor" onSubmit={save} aria-labelledby={headingId}>
      <h3 id={headingId}>{t('guildSettings.channelEditor', { name: channel.name ?? '' })}</h3>
      <Field
        label={t('guildSettings.channelName')}
        value={name}
        onChange={(e) => setName(e.target.value)}
        required
        maxLength={100}
      />
      {text && (
        <>
          <Field
            label={t('guildSettings.topic')}
            value={topic}
            onChange={(e) => setTopic(e.target.value)}
            maxLength={1024}
          />
          <div className="field">
            <label htmlFor={slowId}>{t('guildSettings.slowMode')}</label>
            <select id={slowId} value={slow} onChange={(e) => setSlow(Number(e.target.value))}>
              {SLOW_MODES.map((seconds) => (
                <option key={seconds} value={seconds}>
                  {seconds === 0 ? t('guildSettings.slowModeOff') : t('guildSettings.seconds', { count: seconds })}
                </option>
              ))}
            </select>
          </div>
        </>
      )}
      <ErrorNotice error={action.error} />
      {saved && <p role="status">{t('guildSettings.saved')}</p>}
      <div className="form-actions">
        <Button type="submit" busy={action.busy}>
          {t('guildSettings.saveChannel')}
        </Button>
        <Button
          variant="danger"
          busy={action.busy}
          onClick={async () => {
            if (await action.run(() => admin.deleteChannel(channel.id))) onDeleted();
          }}
        >
          {t('guildSettings.deleteChannel', { name: channel.name ?? '' })}
        </Button>
      </div>
    </form>
  );
}

type Choice = 'allow' | 'neutral' | 'deny';

function OverwriteEditor({ guildId, channel }: { guildId: string; channel: Channel }) {
  const { t } = useTranslation();
  const store = useChat();
  const admin = useGuildAdmin();
  const state = store.guilds.get(guildId);
  const [roleId, setRoleId] = useState(guildId);
  const existing = channel.permission_overwrites?.find((o) => o.id === roleId && o.type === 0);
  const [choices, setChoices] = useState<Record<string, Choice>>(() => choicesOf(existing));
  const [saved, setSaved] = useState(false);
  const action = useRun();
  const roleSelect = useId();
  const helpId = useId();
  const headingId = useId();
  if (!state) return null;
  const roles = [
    ...sortedRoles(state.roles.values(), guildId),
    ...(state.roles.get(guildId) ? [state.roles.get(guildId) as NonNullable<ReturnType<typeof state.roles.get>>] : []),
  ];
  const roleName = (id: string) => (id === guildId ? '@everyone' : (state.roles.get(id)?.name ?? id));

  const save = async (event: FormEvent) => {
    event.preventDefault();
    let allow = 0n;
    let deny = 0n;
    for (const permission of OVERWRITE_PERMISSIONS) {
      if (choices[permission] === 'allow') allow |= bit(permission);
      if (choices[permission] === 'deny') deny |= bit(permission);
    }
    // Bits this editor does not show are kept as they were.
    const shown = OVERWRITE_PERMISSIONS.reduce((all, p) => all | bit(p), 0n);
    allow |= BigInt(existing?.allow ?? '0') & ~shown;
    deny |= BigInt(existing?.deny ?? '0') & ~shown;
    setSaved(false);
    setSaved(
      await action.run(() =>
        allow === 0n && deny === 0n
          ? existing
            ? admin.deleteOverwrite(channel.id, roleId)
            : Promise.resolve()
          : admin.putOverwrite(channel.id, {
              id: roleId,
              type: 0,
              allow: allow.toString(),
              deny: deny.toString(),
            } satisfies PermissionOverwrite),
      ),
    );
  };
  return (
    <form className="role-editor" onSubmit={save} aria-labelledby={headingId}>
      <h3 id={headingId}>{t('guildSettings.overwrites', { name: channel.name ?? '' })}</h3>
      <div className="field">
        <label htmlFor={roleSelect}>{t('guildSettings.overwriteRole')}</label>
        <select
          id={roleSelect}
          value={roleId}
          onChange={(e) => {
            setRoleId(e.target.value);
            setSaved(false);
            setChoices(choicesOf(channel.permission_overwrites?.find((o) => o.id === e.target.value && o.type === 0)));
          }}
        >
          {roles.map((role) => (
            <option key={role.id} value={role.id}>
              {roleName(role.id)}
            </option>
          ))}
        </select>
      </div>
      {OVERWRITE_PERMISSIONS.map((permission) => (
        <fieldset key={permission} className="tri-state" aria-describedby={`${helpId}-${permission}`}>
          <legend>{t(`permissions.${permission}`)}</legend>
          <p id={`${helpId}-${permission}`} className="hint permission-help">
            {t(`permissionHelp.${permission}`)}
          </p>
          {(['allow', 'neutral', 'deny'] as const).map((choice) => (
            <label key={choice} className="check">
              <input
                type="radio"
                name={`${channel.id}-${permission}`}
                checked={(choices[permission] ?? 'neutral') === choice}
                onChange={() => setChoices({ ...choices, [permission]: choice })}
              />
              {t(`guildSettings.${choice}`)}
            </label>
          ))}
        </fieldset>
      ))}
      <ErrorNotice error={action.error} />
      {saved && <p role="status">{t('guildSettings.saved')}</p>}
      <Button type="submit" busy={action.busy}>
        {t('guildSettings.saveOverwrites', { name: roleName(roleId) })}
      </Button>
    </form>
  );
}

function choicesOf(overwrite: PermissionOverwrite | undefined): Record<string, Choice> {
  const out: Record<string, Choice> = {};
  if (!overwrite) return out;
  for (const permission of OVERWRITE_PERMISSIONS) {
    if (BigInt(overwrite.allow) & bit(permission)) out[permission] = 'allow';
    else if (BigInt(overwrite.deny) & bit(permission)) out[permission] = 'deny';
  }
  return out;
}
