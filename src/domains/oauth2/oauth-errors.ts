import { ApiError } from '../../http/errors.ts';

/** RFC 6749 §5.2 error names used by the token, revocation and introspection endpoints. */
export type OAuthErrorName =
  | 'invalid_client'
  | 'invalid_request'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_scope';

/**
 * The standard `{code, message}` body plus the OAuth2 `{error, error_description}` members (docs/conventions.md#errors):
 * `invalid_client` is 401 `UNAUTHORIZED`, every other name 400 `BAD_REQUEST`. No `WWW-Authenticate` header is
 * sent even for Basic client authentication, because docs/conventions.md#errors forbids it on every 401.
 */
export function oauthError(error: OAuthErrorName, description: string): ApiError {
  return new ApiError(error === 'invalid_client' ? 'UNAUTHORIZED' : 'BAD_REQUEST', {
    extra: { error, error_description: description },
  });
}

export function isInvalidClient(error: unknown): boolean {
  return error instanceof ApiError && error.extra.error === 'invalid_client';
}
