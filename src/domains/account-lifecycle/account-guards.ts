import type { AppServices } from '../../app-services.ts';
import type { ApiError } from '../../http/errors.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import { assertNotBot, isDeleted } from '../auth/account-rules.ts';

/**
 * The account an emailed token, ticket or body names (docs/accounts.md#common-rules): a deleted account counts
 * as unknown, so the caller's own "invalid token" error is thrown; a bot account gets 403
 * BOT_USER_AUTH_ENDPOINT_ACCESS_DENIED.
 */
export async function accountFor(
  services: Pick<AppServices, 'users'>,
  userId: string | null | undefined,
  unknown: () => ApiError,
): Promise<UserRecord> {
  const user = userId ? await services.users.findById(userId, { fresh: true }) : undefined;
  if (!user || isDeleted(user)) throw unknown();
  assertNotBot(user);
  return user;
}
