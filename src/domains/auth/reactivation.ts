import type { AppServices } from '../../app-services.ts';
import { hasFlag, USER_FLAGS } from '../../identity/flags.ts';
import type { UserRecord } from '../../identity/user-record.ts';

/**
 * A correct password login ends a self-disable and cancels a pending self-deletion (docs/accounts.md).
 */
export async function reactivate(
  services: Pick<AppServices, 'db' | 'users' | 'credentials'>,
  user: UserRecord,
): Promise<UserRecord> {
  const selfDisabled = hasFlag(user.flags, USER_FLAGS.DISABLED);
  const selfDeleting = hasFlag(user.flags, USER_FLAGS.SELF_DELETED) && user.pendingDeletionAt !== null;
  if (!selfDisabled && !selfDeleting) return user;
  const clear = (selfDisabled ? USER_FLAGS.DISABLED : 0n) | (selfDeleting ? USER_FLAGS.SELF_DELETED : 0n);
  await services.db.query(
    `UPDATE users SET flags = flags & ~($2::bigint), pending_deletion_at = CASE WHEN $3 THEN NULL ELSE pending_deletion_at END WHERE id = $1`,
    [user.id, clear.toString(), selfDeleting],
  );
  await services.credentials.invalidate({ userId: user.id });
  return (await services.users.findById(user.id, { fresh: true })) ?? user;
}
