/**
 * Whether this browser knows an account has a password (docs/mfa-and-sudo.md#sudo-mode): learned when the person signs
 * in, registers or resets with one, changes it, or when the server's sudo refusal lists `password`. A password
 * account without a second factor always needs its password for a sudo-gated action, so, known, the prompt asks
 * for it before the request instead of after a refusal; an account without a password (SSO, or registered
 * without one) passes the check with nothing and is never asked. Not a secret: only the fact is kept.
 */
const key = (userId: string) => `hearth.password.${userId}`;

export function knowsPassword(userId: string): boolean {
  try {
    return window.localStorage.getItem(key(userId)) === '1';
  } catch {
    return false;
  }
}

export function rememberPassword(userId: string): void {
  try {
    window.localStorage.setItem(key(userId), '1');
  } catch {
    // storage disabled: the next sudo action learns it again from the server's answer
  }
}
