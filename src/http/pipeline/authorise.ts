import type { Config } from '../../config/config.ts';
import type { Principal } from '../../identity/principal.ts';
import { constantTimeEqual, digest } from '../../platform/crypto/tokens.ts';
import { ApiError } from '../errors.ts';
import { policyDenial, suspiciousDenial } from '../policy.ts';
import type { AnyRoute } from '../route.ts';

/** Whether SSO enforcement is on right now (the instance settings' switch). */
export type SsoEnforced = () => boolean;

/** `·L` on an unauthenticated route is checked first thing after the IP ban (docs/conventions.md#policies). */
export function checksSsoFirst(spec: Pick<AnyRoute, 'policy' | 'localAuth'>): boolean {
  return spec.localAuth === true && (spec.policy === 'none' || spec.policy === 'self');
}

/** The early SSO refusal of an unauthenticated `·L` route, before any credential is read. */
export function ssoFirstDenial(
  spec: Pick<AnyRoute, 'policy' | 'localAuth'>,
  ssoEnforced: SsoEnforced,
): ApiError | undefined {
  return checksSsoFirst(spec) && ssoEnforced() ? new ApiError('SSO_REQUIRED') : undefined;
}

/**
 * Step 5: the route's policy (`policy.ts`), then `·L` SSO enforcement, then the suspicious-activity gate. The
 * refusal is returned, not thrown: a throw here made V8 capture a stack on the hottest 401 path
 * (docs/performance.md).
 */
export function authorise(
  spec: AnyRoute,
  principal: Principal | undefined,
  ssoEnforced: SsoEnforced,
): ApiError | undefined {
  return (
    policyDenial(spec, principal) ??
    (spec.localAuth && !checksSsoFirst(spec) && ssoEnforced() ? new ApiError('SSO_REQUIRED') : undefined) ??
    suspiciousDenial(spec, principal)
  );
}

/** The test harness answers only in test mode and only to the configured `X-Test-Token`. */
export function testHarnessDenial(
  config: Pick<Config, 'testMode' | 'testToken'>,
  token: string | string[] | undefined,
): ApiError | undefined {
  if (!config.testMode) return new ApiError('NOT_FOUND');
  if (typeof token !== 'string' || !config.testToken || !constantTimeEqual(digest(token), digest(config.testToken)))
    return new ApiError('TEST_HARNESS_FORBIDDEN');
  return undefined;
}
