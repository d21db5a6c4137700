import { isSnowflake } from '../../platform/crypto/snowflake.ts';
import { SESSION_TOKEN_PATTERN } from '../../platform/crypto/tokens.ts';

/**
 * The one parser of the `Authorization` header (docs/conventions.md#the-authorization-header, docs/conventions.md#the-authorization-header). It only reads the form;
 * resolving a credential to an account is `CredentialResolver`'s job.
 */
export type ParsedCredential =
  | { kind: 'none' }
  | { kind: 'invalid' }
  | { kind: 'session'; token: string }
  | { kind: 'bot'; token: string; applicationId: string }
  | { kind: 'bearer'; token: string }
  | { kind: 'admin'; token: string };

const BOT_TOKEN_PATTERN = /^(\d{1,20})\.[A-Za-z0-9_-]+$/;
const BARE_TOKEN_PATTERN = /^[!-~]+$/;

export function parseAuthorization(header: string | undefined, options: { adminArea: boolean }): ParsedCredential {
  if (header === undefined) return { kind: 'none' };
  if (header === '' || header.trim() !== header) return { kind: 'invalid' };

  const space = header.indexOf(' ');
  if (space === -1) {
    return BARE_TOKEN_PATTERN.test(header) ? { kind: 'session', token: header } : { kind: 'invalid' };
  }
  const scheme = header.slice(0, space);
  const token = header.slice(space + 1);
  // "Bot  x" (two spaces) leaves a padded token, which docs/conventions.md#the-authorization-header calls invalid.
  if (token === '' || token.trim() !== token || !BARE_TOKEN_PATTERN.test(token)) return { kind: 'invalid' };

  switch (scheme) {
    case 'Bot': {
      const match = BOT_TOKEN_PATTERN.exec(token);
      // An application id past 2^63−1 names nothing: refused here, like any malformed token, never sent to SQL.
      return match && isSnowflake(match[1] as string)
        ? { kind: 'bot', token, applicationId: match[1] as string }
        : { kind: 'invalid' };
    }
    case 'Bearer':
      return SESSION_TOKEN_PATTERN.test(token) ? { kind: 'session', token } : { kind: 'bearer', token };
    case 'Admin':
      // Outside the Admin API an Admin key is ignored as if absent: no failure signal (docs/conventions.md#the-authorization-header).
      return options.adminArea ? { kind: 'admin', token } : { kind: 'none' };
    default:
      return { kind: 'invalid' };
  }
}

export const ADMIN_API_KEY_PATTERN = /^fa_(\d{1,20})_([A-Za-z0-9]{32})$/;
