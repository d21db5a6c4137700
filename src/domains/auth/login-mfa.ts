/** An MFA login ticket lives 5 minutes and dies after 5 bad codes (docs/conventions.md#credentials). */
export const MFA_TICKET_TTL_MS = 5 * 60_000;
export const MFA_TICKET_MAX_FAILURES = 5;
