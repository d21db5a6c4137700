import type {
  CredentialBinding,
  CredentialKind,
  FoundCredential,
  PresentedCredential,
} from '../../http/auth/credential-kind.ts';
import type { Principal } from '../../identity/principal.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import type { TokenCheck } from '../../platform/crypto/token-check.ts';
import { SESSION_TOKEN_PATTERN } from '../../platform/crypto/tokens.ts';
import type { LegacyTokenDigests } from './legacy-token-digests.ts';
import type { SessionStore } from './session-store.ts';
import type { SessionUseBatch } from './session-use.ts';

type SessionCredential = Extract<PresentedCredential, { kind: 'session' }>;

class SessionBinding implements CredentialBinding {
  readonly expiresAt = null;

  constructor(
    readonly userId: string,
    private readonly sessionId: string,
    private readonly sessionIdHash: string,
    private readonly uses: SessionUseBatch,
  ) {}

  principal(user: UserRecord): Principal {
    return { kind: 'session', user, sessionId: this.sessionId, sessionIdHash: this.sessionIdHash };
  }

  touch(at: number): void {
    this.uses.record(this.sessionId, new Date(at));
  }
}

/** Session tokens (bare, or `Bearer flx_…`): a row of `sessions`, found by the token's digest in the session store. */
export class SessionCredentials implements CredentialKind<SessionCredential> {
  constructor(
    private readonly sessions: Pick<SessionStore, 'findWithUser'>,
    private readonly tokenCheck: TokenCheck,
    private readonly legacy: LegacyTokenDigests,
    private readonly uses: SessionUseBatch,
  ) {}

  plausible(credential: SessionCredential, tokenHash: string): boolean {
    return (
      (SESSION_TOKEN_PATTERN.test(credential.token) && this.tokenCheck.sessionChecks(credential.token)) ||
      this.legacy.has(tokenHash)
    );
  }

  async lookup(_credential: SessionCredential, tokenHash: string): Promise<FoundCredential | undefined> {
    const row = await this.sessions.findWithUser(tokenHash);
    if (!row) return undefined;
    const { session_id: sessionId, ...userRow } = row;
    return { binding: new SessionBinding(row.id, sessionId, tokenHash, this.uses), userRow };
  }
}
