import { effectiveSuspiciousFlags } from '../identity/flags.ts';
import type { Principal } from '../identity/principal.ts';
import { ADMIN_AUTHENTICATE_ACL, WILDCARD_ACL } from './auth/acl-names.ts';
import { ApiError, plainError } from './errors.ts';
import type { AnyRoute } from './route.ts';

function holds(acls: readonly string[], acl: string): boolean {
  return acls.includes(WILDCARD_ACL) || acls.includes(acl);
}

/**
 * Applies a route's policy to the resolved principal (docs/conventions.md#policies, docs/admin.md#credentials-and-checks) and
 * returns the refusal, if any. Returned rather than thrown: a throw inside the request's async pipeline
 * makes V8 capture a stack for a predicted-unhandled rejection, which cost the 401 path more than the
 * rest of its work (docs/performance.md).
 */
export function policyDenial(route: AnyRoute, principal: Principal | undefined): ApiError | undefined {
  switch (route.policy) {
    case 'none':
    case 'credential-free':
    case 'self':
    case 'test':
      return undefined;
    case 'user':
    case 'user-only': {
      if (!principal) return plainError('UNAUTHORIZED');
      if (principal.kind === 'bearer') {
        if (!route.scope) return plainError('ACCESS_DENIED');
        return scopeDenial(principal.scopes, route.scope, route.orScope);
      }
      if (principal.kind === 'admin_key') return plainError('UNAUTHORIZED');
      if (route.policy === 'user-only' && principal.kind === 'bot') return plainError('ACCESS_DENIED');
      return undefined;
    }
    case 'bot':
      if (!principal || principal.kind === 'admin_key') return plainError('UNAUTHORIZED');
      if (principal.kind !== 'bot') return plainError('ACCESS_DENIED');
      return undefined;
    case 'oauth2':
      if (principal?.kind !== 'bearer') return plainError('UNAUTHORIZED');
      return route.scope ? scopeDenial(principal.scopes, route.scope, route.orScope) : undefined;
    case 'admin': {
      if (!principal || principal.kind === 'bot') return plainError('UNAUTHORIZED');
      if (principal.kind === 'bearer' && !principal.isAdminApplication) return plainError('ACCESS_DENIED');
      const userAcls = principal.user.acls;
      if (!holds(userAcls, ADMIN_AUTHENTICATE_ACL)) {
        return new ApiError('MISSING_PERMISSIONS', { extra: { required_acl: ADMIN_AUTHENTICATE_ACL } });
      }
      const acl = route.acl;
      if (acl && acl !== ADMIN_AUTHENTICATE_ACL) {
        const keyOk = principal.kind !== 'admin_key' || holds(principal.keyAcls, acl);
        if (!holds(userAcls, acl) || !keyOk) return new ApiError('MISSING_ACL', { extra: { required_acl: acl } });
      }
      return undefined;
    }
  }
}

function scopeDenial(scopes: ReadonlySet<string>, scope: string, orScope: string | undefined): ApiError | undefined {
  return scopes.has(scope) || (orScope !== undefined && scopes.has(orScope))
    ? undefined
    : new ApiError('MISSING_OAUTH_SCOPE', { extra: { required_scope: scope } });
}

/** The suspicious-activity gate (docs/accounts.md#suspicious-activity-gate): every authenticated route except `+S` and Admin ones. */
export function suspiciousDenial(route: AnyRoute, principal: Principal | undefined): ApiError | undefined {
  if (!principal || route.admitsSuspicious || route.policy === 'admin') return undefined;
  if (route.policy !== 'user' && route.policy !== 'user-only' && route.policy !== 'oauth2' && route.policy !== 'bot')
    return undefined;
  const outstanding = effectiveSuspiciousFlags(principal.user.suspiciousActivityFlags, principal.user.emailVerified);
  if (outstanding === 0) return undefined;
  return new ApiError('ACCOUNT_SUSPICIOUS_ACTIVITY', { extra: { data: { suspicious_activity_flags: outstanding } } });
}
