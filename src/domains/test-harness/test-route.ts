import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, type RouteSpec, route } from '../../http/route.ts';
import { parseSnowflake } from '../../platform/crypto/snowflake.ts';

/** Test-harness routes (docs/accounts.md#test-harness-test-mode-only): policy `test` = test mode on and the right `X-Test-Token`. */
export function testRoute<B = unknown, Q = unknown>(spec: Omit<RouteSpec<B, Q>, 'policy' | 'alsoAtRoot'>): AnyRoute {
  return route<B, Q>({ ...spec, policy: 'test', alsoAtRoot: true });
}

export async function requireUser(services: Pick<AppServices, 'db'>, rawId: string | undefined): Promise<string> {
  const id = parseSnowflake(rawId);
  if (!id.ok) throw new ApiError('UNKNOWN_USER');
  const rows = await services.db.query('SELECT 1 FROM users WHERE id = $1', [id.value]);
  if (rows.length === 0) throw new ApiError('UNKNOWN_USER');
  return id.value;
}
