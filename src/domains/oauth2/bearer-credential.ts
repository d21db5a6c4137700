import type {
  CredentialBinding,
  CredentialKind,
  FoundCredential,
  PresentedCredential,
} from '../../http/auth/credential-kind.ts';
import type { Principal } from '../../identity/principal.ts';
import type { UserRecord } from '../../identity/user-record.ts';
import type { AccessTokenGrant, GrantStore } from './grant-store.ts';

type BearerCredential = Extract<PresentedCredential, { kind: 'bearer' }>;

class BearerBinding implements CredentialBinding {
  readonly userId: string;
  readonly expiresAt: number;
  private readonly applicationId: string;
  private readonly grantId: string;
  private readonly scopes: ReadonlySet<string>;
  private readonly isAdminApplication: boolean;

  constructor(grant: AccessTokenGrant) {
    this.userId = grant.userId;
    this.expiresAt = grant.expiresAt.getTime();
    this.applicationId = grant.applicationId;
    this.grantId = grant.grantId;
    this.scopes = new Set(grant.scopes);
    this.isAdminApplication = grant.isAdminApplication;
  }

  principal(user: UserRecord): Principal {
    return {
      kind: 'bearer',
      user,
      applicationId: this.applicationId,
      scopes: this.scopes,
      grantId: this.grantId,
      isAdminApplication: this.isAdminApplication,
    };
  }

  /** An access token's use is not recorded. */
  touch(): void {}
}

/** `Bearer <access token>` (not a session token): an OAuth2 access token, found by its digest. */
export class BearerCredentials implements CredentialKind<BearerCredential> {
  constructor(private readonly grants: Pick<GrantStore, 'accessTokenGrant'>) {}

  /** Access tokens carry no check part: any may be looked up. */
  plausible(): boolean {
    return true;
  }

  async lookup(_credential: BearerCredential, tokenHash: string): Promise<FoundCredential | undefined> {
    const grant = await this.grants.accessTokenGrant(tokenHash);
    return grant ? { binding: new BearerBinding(grant) } : undefined;
  }
}
