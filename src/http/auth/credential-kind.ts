import type { Principal } from '../../identity/principal.ts';
import type { UserRecord, UserRow } from '../../identity/user-record.ts';
import type { ParsedCredential } from './authorization.ts';

/** A credential that names something to look up: every parsed form but "none" and "invalid". */
export type PresentedCredential = Exclude<ParsedCredential, { kind: 'none' | 'invalid' }>;

/**
 * What a credential names once its row is read, without the user snapshot (that comes from the user cache).
 * The resolver keeps it for a minute and asks it for a principal whenever the user snapshot changes.
 */
export interface CredentialBinding {
  readonly userId: string;
  /** Epoch milliseconds from which it no longer resolves, checked on every use, cached or not; null: never. */
  readonly expiresAt: number | null;
  /** The principal for this credential and user snapshot. */
  principal(user: UserRecord): Principal;
  /** Records a use (last-used times are advisory): called at most once a minute per credential, never awaited. */
  touch(at: number): void;
}

export interface FoundCredential {
  binding: CredentialBinding;
  /** The account row when the look-up read it anyway (it saves the user cache a second round trip). */
  userRow?: UserRow;
}

/**
 * One form of credential (docs/architecture.md#credential-kinds): implemented beside the store of the table
 * that holds it and registered by the composition root. It answers from the database; caching, the race with
 * a revocation and invalidation are the resolver's.
 */
export interface CredentialKind<C extends PresentedCredential> {
  /**
   * False when the token alone shows it was never issued here (a wrong keyed check part): refused without a
   * read. Called only on a cache miss.
   */
  plausible(credential: C, tokenHash: string): boolean;
  /** Reads the credential by its digest; undefined when it is unknown, revoked or does not match. */
  lookup(credential: C, tokenHash: string): Promise<FoundCredential | undefined>;
}

/** The kind that resolves each form the `Authorization` parser yields. */
export type CredentialKinds = {
  readonly [K in PresentedCredential['kind']]: CredentialKind<Extract<PresentedCredential, { kind: K }>>;
};
