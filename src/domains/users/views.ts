import type { AppServices } from '../../app-services.ts';
import { authenticatorTypes, hasMfa } from '../mfa/mfa-factors.ts';
import { privateUser, type UserRecord } from './user-record.ts';

export async function privateUserView(
  services: Pick<AppServices, 'mfa'> & Partial<Pick<AppServices, 'mfaView'>>,
  user: UserRecord,
  options: { includeEmail?: boolean } = {},
): Promise<Record<string, unknown>> {
  // The cached view keeps GET /users/@me off the database (see docs/performance.md).
  const status = await (services.mfaView ?? services.mfa).status(user.id);
  return privateUser(user, { mfaEnabled: hasMfa(status), authenticatorTypes: authenticatorTypes(status) }, options);
}

/** TR in api.md: the answer of every route that signs a user in. */
export async function tokenResponse(
  services: Pick<AppServices, 'mfa'> & Partial<Pick<AppServices, 'mfaView'>>,
  user: UserRecord,
  token: string,
): Promise<{ token: string; user_id: string; user: Record<string, unknown> }> {
  return { token, user_id: user.id, user: await privateUserView(services, user) };
}
