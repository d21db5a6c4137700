import type { AppServices } from '../../app-services.ts';
import type { UserRecord } from '../../identity/user-record.ts';

/** Profile fields shared by `PATCH /users/@me` and `PATCH …/bot`; `undefined` leaves a field as it is. */
export interface ProfileChanges {
  username?: string | undefined;
  global_name?: string | null | undefined;
  bio?: string | null | undefined;
  pronouns?: string | null | undefined;
  accent_color?: number | null | undefined;
  /** Image data (or null to clear), stored through the media service before the row is written. */
  avatar?: string | null | undefined;
  banner?: string | null | undefined;
}

/** The columns of the `UPDATE users` being built; `$1` is the user id. */
export interface UserColumns {
  set(column: string, value: unknown): void;
  /** Binds a value and returns its placeholder, for `assign`. */
  param(value: unknown): string;
  /** Sets a column to an SQL expression over placeholders from `param`. */
  assign(column: string, expression: string): void;
}

export interface ProfileChangeSteps {
  /** Adds the route's own columns (password, bot flags) to the same UPDATE, after the profile fields. */
  extraColumns?: (columns: UserColumns) => void | Promise<void>;
  /** Runs after the UPDATE and before the credentials are invalidated (the email-change token). */
  afterWrite?: () => Promise<void>;
}

/**
 * Writes the given profile changes (and the route's extra columns) in one UPDATE (none when nothing changed),
 * invalidates the user's cached credentials and reads the user back fresh. Publishing USER_UPDATED_TOPIC is
 * left to the caller, which may render its view first.
 */
export async function applyProfileChanges(
  services: Pick<AppServices, 'db' | 'media' | 'credentials' | 'users'>,
  userId: string,
  changes: ProfileChanges,
  steps: ProfileChangeSteps = {},
): Promise<UserRecord | undefined> {
  const sets: string[] = [];
  const values: unknown[] = [userId];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const columns: UserColumns = {
    set: (column, value) => sets.push(`${column} = ${param(value)}`),
    param,
    assign: (column, expression) => sets.push(`${column} = ${expression}`),
  };
  if (changes.username !== undefined) columns.set('username', changes.username);
  if (changes.global_name !== undefined) columns.set('global_name', changes.global_name);
  if (changes.bio !== undefined) columns.set('bio', changes.bio);
  if (changes.pronouns !== undefined) columns.set('pronouns', changes.pronouns);
  if (changes.accent_color !== undefined) columns.set('accent_color', changes.accent_color);
  if (changes.avatar !== undefined)
    columns.set('avatar', await services.media.storeUserImage('avatars', userId, changes.avatar, 'avatar'));
  if (changes.banner !== undefined)
    columns.set('banner', await services.media.storeUserImage('banners', userId, changes.banner, 'banner'));
  await steps.extraColumns?.(columns);
  if (sets.length > 0) await services.db.query(`UPDATE users SET ${sets.join(', ')} WHERE id = $1`, values);
  await steps.afterWrite?.();
  await services.credentials.invalidate({ userId });
  return services.users.findById(userId, { fresh: true });
}
