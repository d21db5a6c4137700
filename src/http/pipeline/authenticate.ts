import type { AppServices } from '../../app-services.ts';
import type { Principal } from '../../identity/principal.ts';
import { type ParsedCredential, parseAuthorization } from '../auth/authorization.ts';
import type { AnyRoute } from '../route.ts';
import type { RequestState } from './request-context.ts';

export type AuthenticateDeps = Pick<AppServices, 'credentials' | 'recordAuthFailure'>;

export interface Authenticated {
  credential: ParsedCredential;
  principal: Principal | undefined;
}

/** Routes that never read a credential: the credential-free ones, the test harness and `self` (its own check). */
export function readsCredential(spec: Pick<AnyRoute, 'policy'>): boolean {
  return spec.policy !== 'credential-free' && spec.policy !== 'test' && spec.policy !== 'self';
}

/**
 * Step 3: `parseAuthorization` → `CredentialResolver.resolve`. A warm hit returns synchronously (no promise);
 * a credential that was offered but did not resolve counts towards the IP-ban trigger in strict mode.
 */
export function authenticate(
  deps: AuthenticateDeps,
  spec: Pick<AnyRoute, 'policy'>,
  authorization: string | undefined,
  state: Pick<RequestState, 'ip' | 'strict'>,
): Authenticated | Promise<Authenticated> {
  if (!readsCredential(spec)) return { credential: { kind: 'none' }, principal: undefined };
  const credential = parseAuthorization(authorization, { adminArea: spec.policy === 'admin' });
  const resolved = deps.credentials.resolve(credential);
  if (resolved instanceof Promise) return resolved.then((principal) => counted(deps, credential, principal, state));
  return counted(deps, credential, resolved, state);
}

function counted(
  deps: AuthenticateDeps,
  credential: ParsedCredential,
  principal: Principal | undefined,
  state: Pick<RequestState, 'ip' | 'strict'>,
): Authenticated | Promise<Authenticated> {
  const result = { credential, principal };
  if (credential.kind !== 'none' && !principal && state.strict)
    return deps.recordAuthFailure(state.ip, state.strict).then(() => result);
  return result;
}
