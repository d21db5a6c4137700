import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import type { UserRecord } from '../../identity/user-record.ts';

/**
 * `invite_code` of registration and login (docs/accounts.md#joining-a-guild-at-sign-up-or-sign-in-invite_code): the
 * account joins the invite's guild as `POST /invites/{code}` would. These routes have no invite error, so a code that names no live
 * invite, a ban from the guild, or a full guild list changes nothing: the sign-in itself succeeds as without it.
 */
export async function joinThroughInviteCode(
  services: Pick<AppServices, 'chatCore'>,
  user: UserRecord,
  code: string | null | undefined,
  now: number,
): Promise<void> {
  if (!code) return;
  try {
    await services.chatCore.joins.accept(code, user, now);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
  }
}
