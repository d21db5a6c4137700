import { HearthApiError } from '../../api/errors.ts';

/** A browser-side WebAuthn failure (cancelled, timed out, unsupported) as an error with a code we translate. */
export function passkeyError(error: unknown): unknown {
  if (error instanceof DOMException) {
    const code = error.name === 'NotSupportedError' ? 'PASSKEY_UNSUPPORTED' : 'PASSKEY_CANCELLED';
    return new HearthApiError(0, code, error.message, {});
  }
  return error;
}
