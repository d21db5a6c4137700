import { effectiveSuspiciousFlags } from '../domains/users/flags.ts';
import type { Principal } from './auth/principal.ts';
import { ApiError } from './errors.ts';
import type { AnyRoute } from './route.ts';

export const WILDCARD_ACL = '*';
export const ADMIN_AUTHENTICATE_ACL = 'admin:authenticate';

function holds(acls: readonly string[], acl: string): boolean {
  return acls.includes(WILDCARD_ACL) || acls.includes(acl);
}

/** Applies a route's policy to the resolved principal (contract §5.3–§5.6, §5.10; api.md §1.6, §3.6). */
export function enforcePolicy(route: AnyRoute, principal: Principal | undefined): void {
  switch (route.policy) {
    case 'none':
    case 'credential-free':
    case 'self':
    case 'test':
      return;
    case 'user':
    case 'user-only': {
      if (!principal) throw new ApiError('UNAUTHORIZED');
      if (principal.kind === 'bearer') {
        if (!route.scope) throw new ApiError('ACCESS_DENIED');
        requireScope(principal.scopes, route.scope);
        return;
      }
      if (principal.kind === 'admin_key') throw new ApiError('UNAUTHORIZED');
      if (route.policy === 'user-only' && principal.kind === 'bot') throw new ApiError('ACCESS_DENIED');
      return;
    }
    case 'bot':
      if (!principal || principal.kind === 'admin_key') throw new ApiError('UNAUTHORIZED');
      if (principal.kind !== 'bot') throw new ApiError('ACCESS_DENIED');
      return;
    case 'oauth2':
      if (principal?.kind !== 'bearer') throw new ApiError('UNAUTHORIZED');
      if (route.scope) requireScope(principal.scopes, route.scope);
      return;
    case 'admin': {
      if (!principal || principal.kind === 'bot') throw new ApiError('UNAUTHORIZED');
      if (principal.kind === 'bearer' && !principal.isAdminApplication) throw new ApiError('ACCESS_DENIED');
      const userAcls = principal.user.acls;
      if (!holds(userAcls, ADMIN_AUTHENTICATE_ACL)) {
        throw new ApiError('MISSING_PERMISSIONS', { extra: { required_acl: ADMIN_AUTHENTICATE_ACL } });
      }
      const acl = route.acl;
      if (acl && acl !== ADMIN_AUTHENTICATE_ACL) {
        const keyOk = principal.kind !== 'admin_key' || holds(principal.keyAcls, acl);
        if (!holds(userAcls, acl) || !keyOk) throw new ApiError('MISSING_ACL', { extra: { required_acl: acl } });
      }
      return;
    }
  }
}

function requireScope(scopes: ReadonlySet<string>, scope: string): void {
  if (!scopes.has(scope)) {
    throw new ApiError('MISSING_OAUTH_SCOPE', { extra: { required_scope: scope } });
  }
}

/** The suspicious-activity gate (contract §5.9): every authenticated route except `+S` and Admin ones. */
export function enforceSuspiciousGate(route: AnyRoute, principal: Principal | undefined): void {
  if (!principal || route.admitsSuspicious || route.policy === 'admin') return;
  if (route.policy !== 'user' && route.policy !== 'user-only' && route.policy !== 'oauth2' && route.policy !== 'bot')
    return;
  const outstanding = effectiveSuspiciousFlags(principal.user.suspiciousActivityFlags, principal.user.emailVerified);
  if (outstanding !== 0) {
    throw new ApiError('ACCOUNT_SUSPICIOUS_ACTIVITY', { extra: { data: { suspicious_activity_flags: outstanding } } });
  }
}
