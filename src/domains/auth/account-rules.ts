import { z } from 'zod';
import { ApiError } from '../../http/errors.ts';
import { hasFlag, USER_FLAGS } from '../../identity/flags.ts';
import type { UserRecord } from '../../identity/user-record.ts';

/** Shared field rules of the authentication area (docs/accounts.md). */
export const emailField = z.string().trim().max(254).email({ error: 'Invalid email address' });
export const passwordField = z.string().min(8).max(256);
export const usernameField = z
  .string()
  .regex(/^[A-Za-z0-9_]{1,32}$/, { error: 'Username must be 1–32 letters, digits or underscores' });

/** Small deny-list; enough to catch the passwords every credential-stuffing list starts with. */
const COMMON_PASSWORDS = new Set([
  'password',
  'password1',
  'password123',
  '12345678',
  '123456789',
  '1234567890',
  'qwertyuiop',
  'qwerty123',
  'iloveyou',
  '11111111',
  '00000000',
  'abc12345',
  'baseball',
  'football',
  'sunshine',
  'princess',
  'letmein1',
  'welcome1',
  'passw0rd',
  'trustno1',
  'superman',
  'starwars',
  'whatever',
  'dragon123',
  'monkey123',
  'qwertyui',
  '87654321',
  'asdfghjk',
  'zaq12wsx',
]);

export function isCommonPassword(password: string): boolean {
  return COMMON_PASSWORDS.has(password.toLowerCase());
}

export function isDeleted(user: UserRecord): boolean {
  return hasFlag(user.flags, USER_FLAGS.DELETED);
}

/** Login refusals for suspended accounts (admin temp ban, suspicious-activity disable). */
export function assertNotSuspended(user: UserRecord, now: number): void {
  // Registered in approval mode and not approved yet: no session of any kind until an admin clears the flag.
  if (hasFlag(user.flags, USER_FLAGS.PENDING_MANUAL_VERIFICATION)) throw new ApiError('ACCOUNT_PENDING_APPROVAL');
  if (hasFlag(user.flags, USER_FLAGS.DISABLED_SUSPICIOUS_ACTIVITY)) throw new ApiError('ACCOUNT_SUSPENDED_PERMANENTLY');
  // A deletion an operator scheduled (no SELF_DELETED flag) is not cancelled by signing in, unlike a self-deletion.
  if (user.pendingDeletionAt && !hasFlag(user.flags, USER_FLAGS.SELF_DELETED))
    throw new ApiError('ACCOUNT_SUSPENDED_PERMANENTLY');
  if (user.tempBannedUntil) {
    const until = user.tempBannedUntil.getTime();
    if (until > now)
      throw new ApiError('ACCOUNT_SUSPENDED_TEMPORARILY', {
        extra: { suspended_until: user.tempBannedUntil.toISOString() },
      });
  }
}

/** A bot account resolved from an authentication route's body, ticket or token (docs/accounts.md#common-rules). */
export function assertNotBot(user: UserRecord): void {
  if (user.isBot) throw new ApiError('BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED');
}
