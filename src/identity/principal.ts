import type { UserRecord } from './user-record.ts';

/**
 * The one type every authenticated request resolves to, whatever header form carried the credential.
 * Read-only: the resolver hands the same object to every request that carries the same credential.
 */
export type Principal = Readonly<
  | { kind: 'session'; user: UserRecord; sessionId: string; sessionIdHash: string }
  | { kind: 'bot'; user: UserRecord; applicationId: string }
  | {
      kind: 'bearer';
      user: UserRecord;
      applicationId: string;
      scopes: ReadonlySet<string>;
      grantId: string;
      isAdminApplication: boolean;
    }
  | { kind: 'admin_key'; user: UserRecord; keyId: string; keyAcls: readonly string[] }
>;
