import type { AppServices } from '../../app-services.ts';
import { type PartialUser, partialUser, type UserRecord } from '../../identity/user-record.ts';
import { authenticatorTypes } from '../mfa/mfa-factors.ts';

/** The Admin API's user (`adminUserView`); `flags` is the whole bitfield as a decimal string. */
export type AdminUserView = Omit<PartialUser, 'flags'> & {
  flags: string;
  email: string | null;
  email_verified: boolean;
  suspicious_activity_flags: number;
  temp_banned_until: string | null;
  pending_deletion_at: string | null;
  acls: string[];
  authenticator_types: number[];
  last_active_at: string | null;
  last_active_ip: string | null;
};

/** The Admin API's user shape (docs/admin.md): partial user plus what an operator needs to act on it. */
export async function adminUserView(services: Pick<AppServices, 'mfa'>, user: UserRecord): Promise<AdminUserView> {
  const status = await services.mfa.status(user.id);
  return {
    ...partialUser(user),
    flags: user.flags.toString(),
    email: user.email,
    email_verified: user.emailVerified,
    suspicious_activity_flags: user.suspiciousActivityFlags,
    temp_banned_until: user.tempBannedUntil?.toISOString() ?? null,
    pending_deletion_at: user.pendingDeletionAt?.toISOString() ?? null,
    acls: user.acls,
    authenticator_types: authenticatorTypes(status),
    last_active_at: user.lastActiveAt?.toISOString() ?? null,
    last_active_ip: user.lastActiveIp,
  };
}
