import { PUBLIC_FLAGS_MASK } from './flags.ts';

/** A user row as the rest of the code sees it. */
export interface UserRecord {
  id: string;
  username: string;
  globalName: string | null;
  email: string | null;
  emailVerified: boolean;
  passwordHash: string | null;
  passwordLastChangedAt: Date | null;
  avatar: string | null;
  banner: string | null;
  bio: string | null;
  pronouns: string | null;
  accentColor: number | null;
  avatarColor: number | null;
  locale: string;
  flags: bigint;
  suspiciousActivityFlags: number;
  pendingManualVerification: boolean;
  /** Set through the test harness for now (no billing); 0 = none. */
  premiumType: number;
  acls: string[];
  isBot: boolean;
  isSystem: boolean;
  tempBannedUntil: Date | null;
  pendingDeletionAt: Date | null;
  lastActiveAt: Date | null;
  lastActiveIp: string | null;
  createdAt: Date;
}

export interface UserRow {
  id: string;
  username: string;
  global_name: string | null;
  email: string | null;
  email_verified: boolean;
  password_hash: string | null;
  password_last_changed_at: Date | null;
  avatar: string | null;
  banner: string | null;
  bio: string | null;
  pronouns: string | null;
  accent_color: number | null;
  avatar_color: number | null;
  locale: string;
  flags: string;
  suspicious_activity_flags: number;
  pending_manual_verification: boolean;
  premium_type: number | null;
  acls: string[];
  is_bot: boolean;
  is_system: boolean;
  temp_banned_until: Date | null;
  pending_deletion_at: Date | null;
  last_active_at: Date | null;
  last_active_ip: string | null;
  created_at: Date;
}

export function toUserRecord(row: UserRow): UserRecord {
  return {
    id: row.id,
    username: row.username,
    globalName: row.global_name,
    email: row.email,
    emailVerified: row.email_verified,
    passwordHash: row.password_hash,
    passwordLastChangedAt: row.password_last_changed_at,
    avatar: row.avatar,
    banner: row.banner,
    bio: row.bio,
    pronouns: row.pronouns,
    accentColor: row.accent_color,
    avatarColor: row.avatar_color,
    locale: row.locale,
    flags: BigInt(row.flags),
    suspiciousActivityFlags: row.suspicious_activity_flags,
    pendingManualVerification: row.pending_manual_verification,
    premiumType: row.premium_type ?? 0,
    acls: row.acls,
    isBot: row.is_bot,
    isSystem: row.is_system,
    tempBannedUntil: row.temp_banned_until,
    pendingDeletionAt: row.pending_deletion_at,
    lastActiveAt: row.last_active_at,
    lastActiveIp: row.last_active_ip,
    createdAt: row.created_at,
  };
}

/** The avatar colour a new account starts with, derived from its id. */
export function defaultAvatarColor(id: string): number {
  return Number(BigInt(id) % 0xffffffn);
}

/** Public flag bits fit in 6 bits, so they are sent as a JSON number. */
export function publicFlags(user: UserRecord): number {
  return Number(user.flags & PUBLIC_FLAGS_MASK);
}

/**
 * The partial user that anyone may see (docs/accounts.md), as `partialUser` builds it. A message's `author` has
 * this shape too, with `avatar_color: null` for a webhook or a deleted user.
 */
export type PartialUser = {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  avatar: string | null;
  avatar_color: number | null;
  bot?: true;
  system?: true;
  flags: number;
};

/** The account holder's own view (`privateUser`, `GET /users/@me`, USER_UPDATE); `email`/`verified` on request. */
export type PrivateUser = PartialUser & {
  email?: string | null;
  verified?: boolean;
  mfa_enabled: boolean;
  authenticator_types: number[];
  phone: null;
  banner: string | null;
  bio: string | null;
  pronouns: string | null;
  accent_color: number | null;
  acls: string[];
  locale: string;
  premium_type: number;
  nsfw_allowed: boolean;
  password_last_changed_at: string | null;
  required_actions: null;
  pending_manual_verification: boolean;
};

/** The partial user that anyone may see (docs/accounts.md). */
export function partialUser(user: UserRecord): PartialUser {
  return {
    id: user.id,
    username: user.username,
    discriminator: '0001',
    global_name: user.globalName,
    avatar: user.avatar,
    avatar_color: user.avatarColor,
    ...(user.isBot ? { bot: true } : {}),
    ...(user.isSystem ? { system: true } : {}),
    flags: publicFlags(user),
  };
}

export interface PrivateUserExtras {
  mfaEnabled: boolean;
  authenticatorTypes: number[];
}

/** The account holder's own view (docs/accounts.md). */
export function privateUser(
  user: UserRecord,
  extras: PrivateUserExtras,
  options: { includeEmail?: boolean } = {},
): PrivateUser {
  // Members are added one by one: spreading the partial user into a literal with this many more members
  // leaves V8's fast path and cost ~30 µs a call on the hottest authenticated route (docs/performance.md).
  // The partial user is widened to the private one member by member; every required member is set below.
  const view = partialUser(user) as PrivateUser;
  if (options.includeEmail ?? true) {
    view.email = user.email;
    view.verified = user.emailVerified;
  }
  view.mfa_enabled = extras.mfaEnabled;
  view.authenticator_types = extras.authenticatorTypes;
  view.phone = null;
  view.banner = user.banner;
  view.bio = user.bio;
  view.pronouns = user.pronouns;
  view.accent_color = user.accentColor;
  view.acls = user.acls;
  view.locale = user.locale;
  view.premium_type = user.premiumType;
  view.nsfw_allowed = true;
  view.password_last_changed_at = user.passwordLastChangedAt?.toISOString() ?? null;
  view.required_actions = null;
  view.pending_manual_verification = user.pendingManualVerification;
  return view;
}

/**
 * The user snapshots the credential resolver keeps beside its bindings (implemented by the users domain's
 * repository): cached reads, a version that moves on every change, and invalidation.
 */
export interface UserSnapshots {
  readonly version: number;
  remember(row: UserRow, seenVersion: number): UserRecord;
  cached(id: string): UserRecord | undefined;
  findById(id: string, options?: { fresh?: boolean }): Promise<UserRecord | undefined>;
  forget(id: string): void;
  forgetAll(): void;
}
