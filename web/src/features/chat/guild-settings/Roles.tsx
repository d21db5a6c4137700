import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Role } from '../../../api/chat-types.ts';
import { Button } from '../../../components/Button.tsx';
import { ErrorNotice } from '../../../components/ErrorNotice.tsx';
import { Field } from '../../../components/Field.tsx';
import { PERMISSION_BITS, type PermissionName } from '../../../lib/permissions.ts';
import { useChat } from '../context.ts';
import { bit, colorToHex, hexToColor, useGuildAdmin, useRun } from './shared.ts';

/** Roles above @everyone, highest first (position, then id as the server orders ties). */
export function sortedRoles(roles: Iterable<Role>, guildId: string): Role[] {
  return [...roles]
    .filter((r) => r.id !== guildId)
    .sort((a, b) => b.position - a.position || (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
}

/** List, create, edit (name, colour, hoist, mentionable, permissions), reorder and delete roles. */
export function Roles({ guildId }: { guildId: string }) {
  const { t } = useTranslation();
  const store = useChat();
  const admin = useGuildAdmin();
  const state = store.guilds.get(guildId);
  const [selected, setSelected] = useState<string | null>(null);
  const [newName, setNewName] = useState('');
  const action = useRun();
  if (!state) return null;
  const roles = sortedRoles(state.roles.values(), guildId);
  const everyone = state.roles.get(guildId);
  const editing = selected ? state.roles.get(selected) : undefined;

  const create = async (event: FormEvent) => {
    event.preventDefault();
    await action.run(async () => {
      const role = await admin.createRole(guildId, { name: newName.trim() || t('guildSettings.newRole') });
      setNewName('');
      setSelected(role.id);
    });
  };
  const move = (index: number, delta: -1 | 1) =>
    action.run(async () => {
      const other = roles[index + delta];
      const role = roles[index];
      if (!other || !role) return;
      await admin.moveRoles(guildId, [
        { id: role.id, position: other.position },
        { id: other.id, position: role.position },
      ]);
    });

  return (
    <div className="roles-section">
      <form className="inline-form" onSubmit={create}>
        <Field
          label={t('guildSettings.newRoleName')}
          value={newName}
          onChange={(e) => setNewName(e.target.value)}
          maxLength={100}
        />
        <Button type="submit" busy={action.busy}>
          {t('guildSettings.createRole')}
        </Button>
      </form>
      <ErrorNotice error={action.error} />
      <ul className="settings-list" aria-label={t('guildSettings.roleList')}>
        {roles.map((role, index) => (
          <li key={role.id} className={role.id === selected ? 'selected' : undefined}>
            <span
              className="role-swatch"
              style={{ background: role.color ? colorToHex(role.color) : undefined }}
              aria-hidden="true"
            />
            <span className="grow">{role.name}</span>
            <button
              type="button"
              className="ghost small"
              onClick={() => setSelected(role.id)}
              aria-label={t('guildSettings.editRole', { name: role.name })}
            >
              {t('guildSettings.edit')}
            </button>
            <button
              type="button"
              className="ghost small"
              disabled={index === 0}
              aria-label={t('guildSettings.moveUp', { name: role.name })}
              onClick={() => void move(index, -1)}
            >
              ↑
            </button>
            <button
              type="button"
              className="ghost small"
              disabled={index === roles.length - 1}
              aria-label={t('guildSettings.moveDown', { name: role.name })}
              onClick={() => void move(index, 1)}
            >
              ↓
            </button>
          </li>
        ))}
        {everyone && (
          <li className={selected === guildId ? 'selected' : undefined}>
            <span className="grow">@everyone</span>
            <button
              type="button"
              className="ghost small"
              onClick={() => setSelected(guildId)}
              aria-label={t('guildSettings.editRole', { name: '@everyone' })}
            >
              {t('guildSettings.edit')}
            </button>
          </li>
        )}
      </ul>
      {editing && <RoleEditor key={editing.id} guildId={guildId} role={editing} onDeleted={() => setSelected(null)} />}
    </div>
  );
}

function RoleEditor({ guildId, role, onDeleted }: { guildId: string; role: Role; onDeleted: () => void }) {
  const { t } = useTranslation();
  const admin = useGuildAdmin();
  const isEveryone = role.id === guildId;
  const [name, setName] = useState(role.name);
  const [color, setColor] = useState(role.color ? colorToHex(role.color) : '#000000');
  const [hoist, setHoist] = useState(role.hoist);
  const [mentionable, setMentionable] = useState(role.mentionable);
  const [permissions, setPermissions] = useState(BigInt(role.permissions));
  const [saved, setSaved] = useState(false);
  const action = useRun();
  const colorId = useId();
  const helpId = useId();

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const ok = await action.run(() =>
      admin.editRole(guildId, role.id, {
        ...(isEveryone ? {} : { name: name.trim(), color: hexToColor(color), hoist, mentionable }),
        permissions: permissions.toString(),
      }),
    );
    setSaved(ok);
  };
  const title = isEveryone ? '@everyone' : role.name;
  return (
    <form className="role-editor" onSubmit={save} aria-label={t('guildSettings.roleEditor', { name: title })}>
      <h3>{t('guildSettings.roleEditor', { name: title })}</h3>
      {!isEveryone && (
        <>
          <Field
            label={t('guildSettings.roleName')}
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={100}
          />
          <div className="field">
            <label htmlFor={colorId}>{t('guildSettings.roleColor')}</label>
            <input id={colorId} type="color" value={color} onChange={(e) => setColor(e.target.value)} />
          </div>
          <label className="check">
            <input type="checkbox" checked={hoist} onChange={(e) => setHoist(e.target.checked)} />
            {t('guildSettings.hoist')}
          </label>
          <label className="check">
            <input type="checkbox" checked={mentionable} onChange={(e) => setMentionable(e.target.checked)} />
            {t('guildSettings.mentionable')}
          </label>
        </>
      )}
      <fieldset className="permission-grid">
        <legend>{t('guildSettings.permissions')}</legend>
        {(Object.keys(PERMISSION_BITS) as PermissionName[]).map((permission) => (
          // The explanation is the checkbox's description, outside its label: the name stays the permission's.
          <div key={permission} className="permission">
            <label className="check">
              <input
                type="checkbox"
                aria-describedby={`${helpId}-${permission}`}
                checked={(permissions & bit(permission)) !== 0n}
                onChange={(e) =>
                  setPermissions(e.target.checked ? permissions | bit(permission) : permissions & ~bit(permission))
                }
              />
              {t(`permissions.${permission}`)}
            </label>
            <p id={`${helpId}-${permission}`} className="hint permission-help">
              {t(`permissionHelp.${permission}`)}
            </p>
          </div>
        ))}
      </fieldset>
      <ErrorNotice error={action.error} />
      {saved && <p role="status">{t('guildSettings.saved')}</p>}
      <div className="form-actions">
        <Button type="submit" busy={action.busy}>
          {t('guildSettings.saveRole')}
        </Button>
        {!isEveryone && (
          <Button
            variant="danger"
            busy={action.busy}
            onClick={async () => {
              if (await action.run(() => admin.deleteRole(guildId, role.id))) onDeleted();
            }}
          >
            {t('guildSettings.deleteRole', { name: role.name })}
          </Button>
        )}
      </div>
    </form>
  );
}
