/** User flag bits (docs/accounts.md#suspicious-activity-gate). 64-bit: kept as bigint, sent as decimal strings where they can pass 2^53. */
export const USER_FLAGS = {
  STAFF: 1n << 0n,
  CTP_MEMBER: 1n << 1n,
  PARTNER: 1n << 2n,
  BUG_HUNTER: 1n << 3n,
  FRIENDLY_BOT: 1n << 4n,
  FRIENDLY_BOT_MANUAL_APPROVAL: 1n << 5n,
  HIGH_GLOBAL_RATE_LIMIT: 1n << 33n,
  DELETED: 1n << 34n,
  DISABLED_SUSPICIOUS_ACTIVITY: 1n << 35n,
  SELF_DELETED: 1n << 36n,
  DISABLED: 1n << 38n,
  HAS_SESSION_STARTED: 1n << 39n,
  RATE_LIMIT_BYPASS: 1n << 47n,
  PENDING_MANUAL_VERIFICATION: 1n << 50n,
  APP_STORE_REVIEWER: 1n << 53n,
} as const;

export type UserFlagName = keyof typeof USER_FLAGS;
/** Bits 0–5 are the ones other users may see. */
export const PUBLIC_FLAGS_MASK = 0x3fn;

export const SUSPICIOUS_FLAGS = {
  REQUIRE_VERIFIED_EMAIL: 1 << 0,
  REQUIRE_REVERIFIED_EMAIL: 1 << 1,
  REQUIRE_VERIFIED_PHONE: 1 << 2,
  REQUIRE_REVERIFIED_PHONE: 1 << 3,
  REQUIRE_VERIFIED_EMAIL_OR_VERIFIED_PHONE: 1 << 4,
  REQUIRE_REVERIFIED_EMAIL_OR_VERIFIED_PHONE: 1 << 5,
  REQUIRE_VERIFIED_EMAIL_OR_REVERIFIED_PHONE: 1 << 6,
  REQUIRE_REVERIFIED_EMAIL_OR_REVERIFIED_PHONE: 1 << 7,
  REQUIRE_INBOUND_PHONE_VERIFICATION: 1 << 8,
} as const;

export type SuspiciousFlagName = keyof typeof SUSPICIOUS_FLAGS;
export const ALL_SUSPICIOUS_FLAGS = Object.values(SUSPICIOUS_FLAGS).reduce((a, b) => a | b, 0);

/** Bits a verified email satisfies without a fresh verification. */
const SATISFIED_BY_VERIFIED_EMAIL =
  SUSPICIOUS_FLAGS.REQUIRE_VERIFIED_EMAIL |
  SUSPICIOUS_FLAGS.REQUIRE_VERIFIED_EMAIL_OR_VERIFIED_PHONE |
  SUSPICIOUS_FLAGS.REQUIRE_VERIFIED_EMAIL_OR_REVERIFIED_PHONE;

/** Bits that verifying an email (again) clears for good. */
export const CLEARED_BY_EMAIL_VERIFICATION =
  SATISFIED_BY_VERIFIED_EMAIL |
  SUSPICIOUS_FLAGS.REQUIRE_REVERIFIED_EMAIL |
  SUSPICIOUS_FLAGS.REQUIRE_REVERIFIED_EMAIL_OR_VERIFIED_PHONE |
  SUSPICIOUS_FLAGS.REQUIRE_REVERIFIED_EMAIL_OR_REVERIFIED_PHONE;

/** The requirements still outstanding: stored bits minus those the account's state already meets. */
export function effectiveSuspiciousFlags(stored: number, emailVerified: boolean): number {
  return emailVerified ? stored & ~SATISFIED_BY_VERIFIED_EMAIL : stored;
}

export function hasFlag(flags: bigint, flag: bigint): boolean {
  return (flags & flag) === flag;
}
