import type { IncomingHttpHeaders } from 'node:http';
import type { ClientInfo } from './session-store.ts';

const OS_RULES: [RegExp, string][] = [
  [/Windows/i, 'Windows'],
  [/Android/i, 'Android'],
  [/iPhone|iPad|iPod|iOS/i, 'iOS'],
  [/Mac OS X|Macintosh|macOS/i, 'macOS'],
  [/CrOS/i, 'ChromeOS'],
  [/Linux|X11/i, 'Linux'],
];
const PLATFORM_RULES: [RegExp, string][] = [
  [/discord\.js|DiscordBot/i, 'discord.js'],
  [/Edg\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/Firefox\//, 'Firefox'],
  [/Chrom(e|ium)\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/curl\//i, 'curl'],
  [/node|undici/i, 'Node.js'],
];

/**
 * What a session list and a new-location email say about the device: the platform's clients describe
 * themselves in `X-Super-Properties` (base64 JSON with `os` and `browser`); anything else is read, roughly,
 * from `User-Agent`. Only these two words are kept, never the raw header. No place: Hearth has no location
 * database, so `location` stays unset.
 */
export function clientInfoOf(headers: IncomingHttpHeaders): ClientInfo {
  const info: ClientInfo = {};
  const superProperties = headers['x-super-properties'];
  if (typeof superProperties === 'string' && superProperties.length <= 4096) {
    try {
      const parsed = JSON.parse(Buffer.from(superProperties, 'base64').toString('utf8')) as Record<string, unknown>;
      // Control characters (a NUL cannot be stored at all) are dropped from the client's words.
      if (typeof parsed.os === 'string') info.os = withoutControls(parsed.os).slice(0, 32) || undefined;
      if (typeof parsed.browser === 'string') info.platform = withoutControls(parsed.browser).slice(0, 32) || undefined;
    } catch {
      // Not base64 JSON: fall back to the user agent.
    }
  }
  const agent = typeof headers['user-agent'] === 'string' ? headers['user-agent'].slice(0, 512) : '';
  info.os ??= OS_RULES.find(([pattern]) => pattern.test(agent))?.[1];
  info.platform ??= PLATFORM_RULES.find(([pattern]) => pattern.test(agent))?.[1];
  if (info.os === undefined) delete info.os;
  if (info.platform === undefined) delete info.platform;
  return info;
}

function withoutControls(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  return text.replace(/[\u0000-\u001f\u007f]/g, '');
}

/** "Chrome on Linux", "Firefox", or "an unknown device". */
export function describeDevice(info: ClientInfo): string {
  if (info.platform && info.os) return `${info.platform} on ${info.os}`;
  return info.platform ?? info.os ?? 'an unknown device';
}
