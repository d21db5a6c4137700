import { ADMIN_API_KEY_PATTERN } from '../../http/auth/authorization.ts';
import type {
  CredentialBinding,
  CredentialKind,
  FoundCredential,
  PresentedCredential,
} from '../../http/auth/credential-kind.ts';
import type { Principal } from '../../identity/principal.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import { isSnowflake } from '../../platform/crypto/snowflake.ts';
import { constantTimeEqual } from '../../platform/crypto/tokens.ts';
import type { Queryable } from '../../platform/db/database.ts';
import type { AdminApiKeys } from './admin-api-keys.ts';

type AdminCredential = Extract<PresentedCredential, { kind: 'admin' }>;

class AdminKeyBinding implements CredentialBinding {
  constructor(
    readonly userId: string,
    readonly expiresAt: number | null,
    private readonly keyId: string,
    private readonly keyAcls: readonly string[],
    private readonly record: (keyId: string, at: Date) => void,
  ) {}

  principal(user: UserRecord): Principal {
    return { kind: 'admin_key', user, keyId: this.keyId, keyAcls: this.keyAcls };
  }

  touch(at: number): void {
    this.record(this.keyId, new Date(at));
  }
}

/** `Admin fa_<key id>_<secret>` on Admin API routes (docs/admin.md#credentials-and-checks). */
export class AdminKeyCredentials implements CredentialKind<AdminCredential> {
  /** Last-used times are advisory: a failed write is dropped (the next use a minute later writes again). */
  private readonly recordUse = (keyId: string, at: Date): void => {
    this.keys.recordUse(this.db, keyId, at).catch(() => {});
  };

  constructor(
    private readonly db: Queryable,
    private readonly keys: Pick<AdminApiKeys, 'findUnrevoked' | 'recordUse'>,
  ) {}

  /** Admin keys carry no check part: any of the right form may be looked up. */
  plausible(): boolean {
    return true;
  }

  async lookup(credential: AdminCredential, tokenHash: string): Promise<FoundCredential | undefined> {
    const match = ADMIN_API_KEY_PATTERN.exec(credential.token);
    const keyId = match?.[1];
    if (keyId === undefined || !isSnowflake(keyId)) return undefined;
    const row = await this.keys.findUnrevoked(this.db, keyId);
    if (!row || !constantTimeEqual(row.secret_hash, tokenHash)) return undefined;
    return {
      binding: new AdminKeyBinding(row.owner_id, row.expires_at?.getTime() ?? null, keyId, row.acls, this.recordUse),
    };
  }
}
