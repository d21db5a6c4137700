/** The ACL that holds every other, and the one every Admin API call needs (docs/admin.md). */
export const WILDCARD_ACL = '*';
export const ADMIN_AUTHENTICATE_ACL = 'admin:authenticate';
