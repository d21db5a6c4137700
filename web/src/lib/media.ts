/**
 * URLs of the pictures the media routes serve (docs/media.md, the media proxy table): avatars, banners, guild
 * icons, group DM icons and per-guild member avatars. Every picture of a person or a guild in the client is built here
 * (docs/web.md#pictures).
 */

/** A stored picture: its route family, its owner and the hash that names its current version. */
export type ImageSource =
  | { kind: 'avatar'; userId: string; hash: string }
  | { kind: 'banner'; userId: string; hash: string }
  | { kind: 'icon'; guildId: string; hash: string }
  | { kind: 'channel-icon'; channelId: string; hash: string }
  | { kind: 'member-avatar'; guildId: string; userId: string; hash: string };

/** The route's bounds for `size` (it snaps to a power of two in between). */
const MIN_SIZE = 16;
const MAX_SIZE = 4096;

/**
 * The picture a person shows: in a guild their per-guild member avatar when they set one, else their account's
 * avatar; null when neither is set (the initials show instead).
 */
export function userAvatar(
  user: { id: string; avatar?: string | null | undefined } | undefined,
  member?: { avatar?: string | null | undefined } | undefined,
  guildId?: string | undefined,
): ImageSource | null {
  if (!user) return null;
  if (guildId && member?.avatar) return { kind: 'member-avatar', guildId, userId: user.id, hash: member.avatar };
  return user.avatar ? { kind: 'avatar', userId: user.id, hash: user.avatar } : null;
}

/** A guild's icon, or null when it has none. */
export function guildIcon(guild: { id: string; icon?: string | null | undefined }): ImageSource | null {
  return guild.icon ? { kind: 'icon', guildId: guild.id, hash: guild.icon } : null;
}

/** A group conversation's icon, or null when it has none. */
export function groupDmIcon(channel: { id: string; icon?: string | null | undefined }): ImageSource | null {
  return channel.icon ? { kind: 'channel-icon', channelId: channel.id, hash: channel.icon } : null;
}

/**
 * The `size` to ask for: the displayed size in device pixels, rounded up to the power of two the route serves
 * (the route rounds to the nearest one, which could be smaller than what is drawn).
 */
export function requestSize(cssPixels: number, devicePixelRatio: number): number {
  const wanted = Math.max(MIN_SIZE, Math.min(MAX_SIZE, Math.ceil(cssPixels * Math.max(1, devicePixelRatio))));
  return Math.min(MAX_SIZE, 2 ** Math.ceil(Math.log2(wanted)));
}

function routeOf(source: ImageSource): string {
  switch (source.kind) {
    case 'avatar':
      return `avatars/${source.userId}`;
    case 'banner':
      return `banners/${source.userId}`;
    case 'icon':
      return `icons/${source.guildId}`;
    case 'channel-icon':
      return `channel-icons/${source.channelId}`;
    case 'member-avatar':
      return `guilds/${source.guildId}/users/${source.userId}/avatars`;
  }
}

/**
 * The URL of a picture drawn `cssPixels` wide. WebP, animated when the hash says the upload was (`a_`) unless
 * the person asked for reduced motion; the hash in the path makes each version its own cacheable URL.
 */
export function imageUrl(
  mediaBase: string,
  source: ImageSource,
  cssPixels: number,
  options: { devicePixelRatio?: number; animate?: boolean } = {},
): string {
  const size = requestSize(cssPixels, options.devicePixelRatio ?? window.devicePixelRatio ?? 1);
  const animate = (options.animate ?? !prefersReducedMotion()) && source.hash.startsWith('a_');
  return `${mediaBase}/${routeOf(source)}/${source.hash}.webp?size=${size}${animate ? '&animated=true' : ''}`;
}

function prefersReducedMotion(): boolean {
  return typeof window.matchMedia === 'function' && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
}

/** Up to `limit` initials of a name ("Wind Rose" → "WR"), shown when there is no picture. */
export function initials(name: string, limit = 3): string {
  return (
    name
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, limit)
      .map((word) => [...word][0])
      .join('') || '?'
  );
}
