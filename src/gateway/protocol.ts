import { LARGE_THRESHOLD_MAX } from '../domains/chat/guild-payload.ts';
import type { GatewayEvent, GatewayEvents } from '../domains/events/catalogue.ts';
import { parseSnowflake } from '../platform/crypto/snowflake.ts';

/** Gateway opcodes (docs/gateway.md), the numbers Discord-style libraries already speak. */
export const OP = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  IDENTIFY: 2,
  PRESENCE_UPDATE: 3,
  VOICE_STATE_UPDATE: 4,
  RESUME: 6,
  RECONNECT: 7,
  REQUEST_GUILD_MEMBERS: 8,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
  /** Discord's lazy-guild request of user clients (docs/gateway.md#large-guilds). */
  GUILD_SUBSCRIPTIONS: 14,
} as const;

export interface CloseReason {
  code: number;
  reason: string;
}

const close = (code: number, reason: string): CloseReason => Object.freeze({ code, reason });

/** Every close the server sends; the reasons are part of the protocol (the 4002 identify one is contract). */
export const CLOSE = {
  FAILED_TO_START: close(4000, 'Failed to start session'),
  SESSION_UNAVAILABLE: close(4000, 'Session unavailable'),
  DRAIN: close(4000, 'Session drain requested; reconnect to continue'),
  /** Bus messages meant for the session may have been lost (docs/gateway.md#across-nodes): resume to resync. */
  RESYNC: close(4000, 'Events may have been lost; reconnect to continue'),
  UNKNOWN_OPCODE: close(4001, 'Unknown opcode'),
  INVALID_IDENTIFY: close(4002, 'Invalid identify payload'),
  INVALID_RESUME: close(4002, 'Invalid resume payload'),
  INVALID_PRESENCE: close(4002, 'Invalid presence payload'),
  DECODE_FAILED: close(4002, 'Decode failed'),
  INVALID_PAYLOAD: close(4002, 'Invalid payload'),
  INVALID_SUBSCRIPTIONS: close(4002, 'Invalid guild subscriptions payload'),
  PAYLOAD_TOO_LARGE: close(4002, 'Payload too large'),
  NOT_AUTHENTICATED: close(4003, 'Not authenticated'),
  INVALID_TOKEN: close(4004, 'Invalid token'),
  ALREADY_AUTHENTICATED: close(4005, 'Already authenticated'),
  INVALID_SEQUENCE: close(4007, 'Invalid sequence'),
  RATE_LIMITED: close(4008, 'Rate limited'),
  TOO_MANY_CONNECTIONS: close(4008, 'Too many connections'),
  TOO_MANY_SESSIONS: close(4008, 'Too many sessions'),
  HEARTBEAT_TIMEOUT: close(4009, 'Heartbeat timeout'),
  INVALID_SHARD: close(4010, 'Invalid shard'),
  SHARDING_REQUIRED: close(4011, 'Sharding required'),
  INVALID_VERSION: close(4012, 'Invalid API version'),
  /** Suspicious-activity flags appeared: identify again to get a restricted session. */
  RESTRICTED: close(4000, 'Session restricted'),
} as const;

export const MAX_INBOUND_BYTES = 4096;

/** Frames that never change, built once. */
export const FRAMES = {
  heartbeatAck: JSON.stringify({ op: OP.HEARTBEAT_ACK }),
  heartbeatRequest: JSON.stringify({ op: OP.HEARTBEAT, d: null }),
  invalidSession: JSON.stringify({ op: OP.INVALID_SESSION, d: false }),
  reconnect: JSON.stringify({ op: OP.RECONNECT, d: null }),
  hello: (heartbeatIntervalMs: number) =>
    JSON.stringify({ op: OP.HELLO, d: { heartbeat_interval: heartbeatIntervalMs } }),
};

/**
 * A dispatch serialised once for all its recipients: every session's frame is `prefix + seq + '}'`, so the
 * (possibly large) `d` is stringified a single time per audience however many sockets receive it.
 */
export function dispatchPrefix<E extends GatewayEvent>(event: E, payload: GatewayEvents[E]): string {
  return framePrefix({ event, payload } as EventFrame);
}

/** Any event of the catalogue with its payload (src/domains/events/catalogue.ts). */
export type EventFrame = { [E in GatewayEvent]: { event: E; payload: GatewayEvents[E] } }[GatewayEvent];

/** `dispatchPrefix` of an event and payload already paired (a fan-out part). */
export function framePrefix({ event, payload }: EventFrame): string {
  return `{"op":0,"t":${JSON.stringify(event)},"d":${JSON.stringify(payload)},"s":`;
}

export function dispatchFrame(prefix: string, seq: number): string {
  return `${prefix}${seq}}`;
}

export interface InboundFrame {
  op: number;
  d: unknown;
}

/** Parses one inbound text frame; `undefined` means it is not a JSON object with an integer `op`. */
export function parseFrame(text: string): InboundFrame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const op = (value as { op?: unknown }).op;
  if (typeof op !== 'number' || !Number.isInteger(op)) return undefined;
  return { op, d: (value as { d?: unknown }).d };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const optionalString = (value: unknown) => value === undefined || typeof value === 'string';

export interface IdentifyPayload {
  token: string;
  shard: [number, number] | undefined;
  presence: PresencePayload | undefined;
  /** Discord's gateway intents bit set; undefined (not sent, or not a non-negative integer) = every event. */
  intents: number | undefined;
  /** Above this many members a guild is `large` for the session (docs/gateway.md#large-guilds). */
  largeThreshold: number;
}

/** Discord's `large_threshold`: 50 when not sent, and always within 50–250. */
export const LARGE_THRESHOLD = { default: 50, min: 50, max: LARGE_THRESHOLD_MAX } as const;

function largeThresholdOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return LARGE_THRESHOLD.default;
  return Math.min(LARGE_THRESHOLD.max, Math.max(LARGE_THRESHOLD.min, Math.floor(value)));
}

export type IdentifyCheck = { ok: true; value: IdentifyPayload } | { ok: false; close: CloseReason };

/**
 * Op 2. `properties` may be omitted (some minimal clients do) but, when present, must be an object of strings.
 * `compress` and `flags` are accepted and ignored; `large_threshold` is clamped to 50–250 (a number of any other
 * shape counts as not sent); of `intents`, only the privileged GUILD_MEMBERS and GUILD_PRESENCES bits are applied
 * (docs/gateway.md#intents).
 */
export function parseIdentify(d: unknown): IdentifyCheck {
  if (!isRecord(d) || typeof d.token !== 'string' || d.token.length === 0 || d.token.length > 512)
    return { ok: false, close: CLOSE.INVALID_IDENTIFY };
  const properties = d.properties;
  if (properties !== undefined) {
    if (!isRecord(properties)) return { ok: false, close: CLOSE.INVALID_IDENTIFY };
    for (const key of ['os', 'browser', 'device'])
      if (!optionalString(properties[key])) return { ok: false, close: CLOSE.INVALID_IDENTIFY };
  }
  let shard: [number, number] | undefined;
  if (d.shard !== undefined && d.shard !== null) {
    const s = d.shard;
    if (
      !Array.isArray(s) ||
      s.length !== 2 ||
      !Number.isInteger(s[0]) ||
      !Number.isInteger(s[1]) ||
      s[1] < 1 ||
      s[1] > 4096 ||
      s[0] < 0 ||
      s[0] >= s[1]
    )
      return { ok: false, close: CLOSE.INVALID_SHARD };
    shard = [s[0], s[1]];
  }
  let presence: PresencePayload | undefined;
  if (d.presence !== undefined && d.presence !== null) {
    const parsed = parsePresence(d.presence);
    if (!parsed) return { ok: false, close: CLOSE.INVALID_IDENTIFY };
    presence = parsed;
  }
  const intents =
    typeof d.intents === 'number' && Number.isSafeInteger(d.intents) && d.intents >= 0 ? d.intents : undefined;
  return {
    ok: true,
    value: { token: d.token, shard, presence, intents, largeThreshold: largeThresholdOf(d.large_threshold) },
  };
}

export interface ResumePayload {
  token: string;
  sessionId: string;
  seq: number;
}

/** Op 6 `{token, session_id, seq}`; `seq` may be null (nothing received yet), which counts as 0. */
export function parseResume(d: unknown): ResumePayload | undefined {
  if (!isRecord(d)) return undefined;
  const { token, session_id: sessionId, seq } = d;
  if (typeof token !== 'string' || token.length === 0 || token.length > 512) return undefined;
  if (typeof sessionId !== 'string' || !/^[A-Za-z0-9]{1,64}$/.test(sessionId)) return undefined;
  if (seq !== null && (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 0)) return undefined;
  return { token, sessionId, seq: seq ?? 0 };
}

export const STATUSES = ['online', 'idle', 'dnd', 'invisible', 'offline'] as const;
export type Status = (typeof STATUSES)[number];

export interface PresencePayload {
  status: Status;
  afk: boolean;
  mobile: boolean;
  customStatus: Record<string, unknown> | null;
  /** Discord's activities ("Playing …"), each reduced to the members clients read. */
  activities: Record<string, unknown>[];
  since: number | null;
}

const MAX_ACTIVITIES = 10;

/** One activity: `name` and `type` (0 playing … 6 hang status) required; the rest optional text. */
function parseActivity(raw: unknown): Record<string, unknown> | undefined {
  if (!isRecord(raw)) return undefined;
  const { name, type } = raw;
  if (typeof name !== 'string' || name.length === 0 || name.length > 128) return undefined;
  if (typeof type !== 'number' || !Number.isInteger(type) || type < 0 || type > 6) return undefined;
  const activity: Record<string, unknown> = { name, type };
  for (const key of ['url', 'state', 'details'] as const) {
    const value = raw[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value.length > 512) return undefined;
    activity[key] = value;
  }
  if (raw.created_at !== undefined && raw.created_at !== null) {
    if (typeof raw.created_at !== 'number' || !Number.isFinite(raw.created_at)) return undefined;
    activity.created_at = raw.created_at;
  }
  return activity;
}

/** Op 3 `{status, afk?, mobile?, since?, activities?, custom_status?}`. */
export function parsePresence(d: unknown): PresencePayload | undefined {
  if (!isRecord(d)) return undefined;
  const { status, afk, mobile } = d;
  const customStatus = d.custom_status;
  if (typeof status !== 'string' || !(STATUSES as readonly string[]).includes(status)) return undefined;
  if (afk !== undefined && afk !== null && typeof afk !== 'boolean') return undefined;
  if (mobile !== undefined && mobile !== null && typeof mobile !== 'boolean') return undefined;
  let custom: Record<string, unknown> | null = null;
  if (customStatus !== undefined && customStatus !== null) {
    if (!isRecord(customStatus)) return undefined;
    const text = customStatus.text;
    const emoji = customStatus.emoji_name;
    if (!optionalString(text) || (typeof text === 'string' && text.length > 128)) return undefined;
    if (!optionalString(emoji) || (typeof emoji === 'string' && emoji.length > 64)) return undefined;
    custom = { text: text ?? null, emoji_name: emoji ?? null };
  }
  const activities: Record<string, unknown>[] = [];
  if (d.activities !== undefined && d.activities !== null) {
    if (!Array.isArray(d.activities) || d.activities.length > MAX_ACTIVITIES) return undefined;
    for (const raw of d.activities) {
      const activity = parseActivity(raw);
      if (!activity) return undefined;
      activities.push(activity);
    }
  }
  const since = typeof d.since === 'number' && Number.isFinite(d.since) ? d.since : null;
  return {
    status: status as Status,
    afk: afk === true,
    mobile: mobile === true,
    customStatus: custom,
    activities,
    since,
  };
}

export interface RequestMembersPayload {
  guildId: string;
  query: string | undefined;
  limit: number;
  userIds: string[] | undefined;
  nonce: string | undefined;
  /** `presences: true`: each chunk also carries the presences of its members who are online. */
  presences: boolean;
}

/** Op 8. `limit` 0 (Discord's "all" with an empty query) is served as the maximum chunked listing. */
export function parseRequestMembers(d: unknown): RequestMembersPayload | undefined {
  if (!isRecord(d)) return undefined;
  const guild = parseSnowflake(d.guild_id);
  if (!guild.ok) return undefined;
  const { query, limit, nonce } = d;
  // A NUL cannot reach the database (docs/conventions.md#errors): it is a malformed query, not a failed session.
  if (query !== undefined && (typeof query !== 'string' || query.length > 100 || query.includes('\u0000')))
    return undefined;
  if (limit !== undefined && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0 || limit > 1000))
    return undefined;
  if (nonce !== undefined && nonce !== null && (typeof nonce !== 'string' || nonce.length > 32)) return undefined;
  if (d.presences !== undefined && d.presences !== null && typeof d.presences !== 'boolean') return undefined;
  let userIds: string[] | undefined;
  const rawIds = d.user_ids;
  if (rawIds !== undefined && rawIds !== null) {
    const list = Array.isArray(rawIds) ? rawIds : [rawIds];
    if (list.length > 100) return undefined;
    userIds = [];
    for (const id of list) {
      const parsed = parseSnowflake(id);
      if (!parsed.ok) return undefined;
      userIds.push(parsed.value);
    }
  }
  return {
    guildId: guild.value,
    query,
    limit: limit === undefined || limit === 0 ? 1000 : limit,
    userIds,
    nonce: typeof nonce === 'string' ? nonce : undefined,
    presences: d.presences === true,
  };
}

/** Bounds of op 14 (docs/gateway.md#large-guilds). */
export const SUBSCRIPTION_LIMITS = { guilds: 100, members: 100 } as const;

export interface GuildSubscriptionPayload {
  guildId: string;
  /** `true`: every member's presence; `false`: only `members`'; absent: unchanged (or everything when new). */
  activities: boolean | undefined;
  /** Users whose presence the session follows in this guild; absent: unchanged. */
  members: string[] | undefined;
}

const optionalBoolean = (value: unknown) => value === undefined || value === null || typeof value === 'boolean';

/**
 * Op 14 `{guild_id, typing?, activities?, threads?, members?, channels?}`, Discord's lazy request. `typing`,
 * `threads` and `channels` (member-list ranges) are checked for shape and not applied; `members` holds at most
 * 100 user ids.
 */
export function parseGuildSubscription(d: unknown): GuildSubscriptionPayload | undefined {
  if (!isRecord(d)) return undefined;
  const guild = parseSnowflake(d.guild_id);
  if (!guild.ok) return undefined;
  if (!optionalBoolean(d.typing) || !optionalBoolean(d.threads) || !optionalBoolean(d.activities)) return undefined;
  if (d.channels !== undefined && d.channels !== null && !isRecord(d.channels)) return undefined;
  let members: string[] | undefined;
  if (d.members !== undefined && d.members !== null) {
    if (!Array.isArray(d.members) || d.members.length > SUBSCRIPTION_LIMITS.members) return undefined;
    members = [];
    for (const id of d.members) {
      const parsed = parseSnowflake(id);
      if (!parsed.ok) return undefined;
      members.push(parsed.value);
    }
  }
  return { guildId: guild.value, activities: typeof d.activities === 'boolean' ? d.activities : undefined, members };
}
