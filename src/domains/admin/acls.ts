import { z } from 'zod';
import { ADMIN_AUTHENTICATE_ACL, WILDCARD_ACL } from '../../http/auth/acl-names.ts';
import { ApiError } from '../../http/errors.ts';

/** ACLs that Admin routes check today (docs/admin.md). */
export const ROUTE_ACLS = [
  ADMIN_AUTHENTICATE_ACL,
  'acl:set:user',
  'admin_api_key:manage',
  'audit_log:view',
  'instance:config:view',
  'instance:config:update',
  'user:lookup',
  'user:update:flags',
  'user:update:suspicious_activity',
  'user:update:mfa',
  'user:disable:suspicious',
  'user:temp_ban',
  'user:delete',
  'user:list:sessions',
  'ban:ip:add',
  'ban:ip:check',
  'ban:ip:remove',
  'report:view',
  'report:resolve',
] as const;

/** Reserved for later Admin routes; grantable now so operators can prepare roles. */
export const RESERVED_ACLS = [
  'user:list:guilds',
  'user:update:email',
  'user:update:username',
  'user:view:email',
  'user:view:ip',
  ...(['email', 'phrase'] as const).flatMap((kind) => ['add', 'check', 'remove'].map((op) => `ban:${kind}:${op}`)),
  'guild:lookup',
  'guild:delete',
  'message:lookup',
  'message:delete',
];

export type RouteAcl = (typeof ROUTE_ACLS)[number];

const KNOWN_ACLS: ReadonlySet<string> = new Set([WILDCARD_ACL, ...ROUTE_ACLS, ...RESERVED_ACLS]);

export function isKnownAcl(name: string): boolean {
  return KNOWN_ACLS.has(name);
}

export function holdsAcl(acls: readonly string[], acl: string): boolean {
  return acls.includes(WILDCARD_ACL) || acls.includes(acl);
}

/** A list of ACL names; unknown names are `INVALID_FORM_BODY` with `UNKNOWN_ACL` on the element. */
export const aclListField = z
  .array(
    z
      .string()
      .max(100)
      .refine(isKnownAcl, { error: 'Unknown ACL', params: { code: 'UNKNOWN_ACL' } }),
  )
  .max(111)
  .transform((acls) => [...new Set(acls)]);

/**
 * Who is granting: a user alone, or an Admin API key, which is limited by both itself and its owner
 * (docs/admin.md#credentials-and-checks). Granting an ACL requires holding it on every side; the first one missing is named.
 */
export function assertCanGrant(grantors: readonly (readonly string[])[], acls: Iterable<string>): void {
  for (const acl of acls) {
    const held = grantors.every((grantor) =>
      acl === WILDCARD_ACL ? grantor.includes(WILDCARD_ACL) : holdsAcl(grantor, acl),
    );
    if (!held) throw new ApiError('MISSING_ACL', { extra: { required_acl: acl } });
  }
}

/** What a principal may do on the Admin API: the user's ACLs, narrowed by the key's when it is a key. */
export function effectiveAcls(userAcls: readonly string[], keyAcls?: readonly string[]): string[] {
  if (!keyAcls) return [...userAcls];
  if (userAcls.includes(WILDCARD_ACL)) return [...keyAcls];
  if (keyAcls.includes(WILDCARD_ACL)) return [...userAcls];
  return userAcls.filter((acl) => keyAcls.includes(acl));
}
