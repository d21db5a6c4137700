import type { AppServices } from '../../app-services.ts';
import { ApiError, fieldError } from '../../http/errors.ts';
import { defaultAvatarColor, type UserRecord } from '../../identity/user-record.ts';
import { isUniqueViolation } from '../../platform/db/database.ts';
import { assertNotBot, isDeleted } from '../auth/account-rules.ts';
import type { SsoSettings } from '../instance/instance-settings.ts';
import type { SsoIdentities } from './sso-identities.ts';

export interface ProviderIdentity {
  issuer: string;
  subject: string;
  /** Verified by the provider (checked before resolution). */
  email: string;
  name: string | null;
  preferredUsername: string | null;
}

type Deps = Pick<AppServices, 'db' | 'ids' | 'users'>;

const mismatch = (message: string) => fieldError('code', 'SSO_IDENTITY_MISMATCH', message);

/**
 * Finds the account a provider identity signs into (issue 7, docs/sso.md#account-resolution), in this order: the link
 * for (issuer, subject); an account with the same email when `link_by_email` is on; a new account when
 * `auto_provision` is on; otherwise 403 SSO_REQUIRED.
 *
 * Linking by email also requires the local address to be verified: otherwise anyone could register the
 * victim's address with a password first and receive the victim's SSO sign-ins on an account they control.
 */
export async function resolveAccount(
  deps: Deps,
  identities: SsoIdentities,
  sso: SsoSettings,
  identity: ProviderIdentity,
  ctx: { ipKey: string; now: number },
  retried = false,
): Promise<UserRecord> {
  const now = new Date(ctx.now);
  const linkedId = await identities.userFor(identity.issuer, identity.subject);
  if (linkedId) {
    const user = await deps.users.findById(linkedId, { fresh: true });
    // A deleted account keeps its link so the subject cannot be re-provisioned into a fresh account.
    if (!user || isDeleted(user)) throw new ApiError('SSO_REQUIRED');
    assertNotBot(user);
    await identities.touch(identity.issuer, identity.subject, now);
    return user;
  }

  const byEmail = await deps.users.findByEmail(identity.email);
  if (byEmail && !isDeleted(byEmail)) {
    assertNotBot(byEmail);
    if (sso.link_by_email && byEmail.emailVerified) {
      const other = await identities.subjectOf(byEmail.id, identity.issuer);
      if (other !== undefined) throw mismatch('This account is linked to another identity of this provider');
      try {
        await identities.link(identity.issuer, identity.subject, byEmail.id, now);
      } catch (error) {
        if (isUniqueViolation(error) && !retried) return resolveAccount(deps, identities, sso, identity, ctx, true);
        throw error;
      }
      return byEmail;
    }
    if (sso.auto_provision) throw mismatch('An account with this email exists and cannot be linked automatically');
    throw new ApiError('SSO_REQUIRED');
  }

  if (!sso.auto_provision) throw new ApiError('SSO_REQUIRED');

  const id = deps.ids.next();
  try {
    await deps.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO users (id, username, global_name, email, email_verified, avatar_color, created_at)
         VALUES ($1, $2, $3, $4, true, $5, $6)`,
        [
          id,
          usernameFor(identity, id),
          identity.name?.slice(0, 32) || null,
          identity.email,
          defaultAvatarColor(id),
          now,
        ],
      );
      await tx.query('INSERT INTO authorized_ips (user_id, ip_key) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
        id,
        ctx.ipKey,
      ]);
      await identities.link(identity.issuer, identity.subject, id, now, tx);
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // A concurrent completion for the same subject won the race: sign into the account it created.
    if (!retried) return resolveAccount(deps, identities, sso, identity, ctx, true);
    throw mismatch('An account with this email exists and cannot be linked automatically');
  }
  const created = await deps.users.findById(id, { fresh: true });
  if (!created) throw new Error('provisioned user vanished');
  return created;
}

function usernameFor(identity: ProviderIdentity, id: string): string {
  const base = (identity.preferredUsername ?? identity.email.split('@')[0] ?? '')
    .replace(/[^A-Za-z0-9_]/g, '')
    .slice(0, 32);
  return base || `user${id.slice(-6)}`;
}
