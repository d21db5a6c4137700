import type { PrivateUser } from '../api/types.ts';

/**
 * Whether the account may open the admin panel: it holds `admin:authenticate` or `*` (docs/admin.md#credentials-and-checks).
 * Each Admin API route still checks its own ACL; this only decides what the client offers.
 */
export function canOpenAdmin(user: Pick<PrivateUser, 'acls'> | null): boolean {
  const acls = user?.acls ?? [];
  return acls.includes('admin:authenticate') || acls.includes('*');
}
