import type { AppServices } from '../../app-services.ts';
import { ApiError } from '../../http/errors.ts';
import { type AnyRoute, type RateLimitSpec, type RouteSpec, route } from '../../http/route.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import type { RouteAcl } from './acls.ts';

/** docs/conventions.md#rate-limits: admin reads 200/60 s, writes 100/60 s, key creation 30/60 s. */
const ADMIN_LIMITS = {
  read: { bucket: 'admin:read', limit: 200, windowSeconds: 60 },
  write: { bucket: 'admin:write', limit: 100, windowSeconds: 60 },
  key_create: { bucket: 'admin:api_key_create', limit: 30, windowSeconds: 60 },
} as const satisfies Record<string, RateLimitSpec>;

/** An Admin route: policy `admin` with its ACL, under `/admin`, in one of the three rate-limit groups. */
export function adminRoute<B = unknown, Q = unknown>(
  spec: Omit<RouteSpec<B, Q>, 'policy' | 'acl' | 'rateLimit' | 'admitsSuspicious'> & {
    acl: RouteAcl;
    kind: keyof typeof ADMIN_LIMITS;
  },
): AnyRoute {
  const { kind, ...rest } = spec;
  return route<B, Q>({ ...rest, policy: 'admin', rateLimit: ADMIN_LIMITS[kind] });
}

export { bitfieldField, snowflakeField } from '../../http/fields.ts';

/** The target of a user operation; the Admin API sees every account, including bots and deleted ones. */
export async function targetUser(services: Pick<AppServices, 'users'>, userId: string): Promise<UserRecord> {
  const user = await services.users.findById(userId, { fresh: true });
  if (!user) throw new ApiError('UNKNOWN_USER');
  return user;
}
