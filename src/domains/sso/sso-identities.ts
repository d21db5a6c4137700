import type { Queryable } from '../../platform/db/database.ts';

/** Links between a provider subject and a Hearth account (`sso_identities`). */
export class SsoIdentities {
  constructor(private readonly db: Queryable) {}

  async userFor(issuer: string, subject: string, db: Queryable = this.db): Promise<string | undefined> {
    const [row] = await db.query<{ user_id: string }>(
      'SELECT user_id FROM sso_identities WHERE provider_issuer = $1 AND subject = $2',
      [issuer, subject],
    );
    return row?.user_id;
  }

  /** The subject an account is already linked to at this issuer, if any. */
  async subjectOf(userId: string, issuer: string, db: Queryable = this.db): Promise<string | undefined> {
    const [row] = await db.query<{ subject: string }>(
      'SELECT subject FROM sso_identities WHERE user_id = $1 AND provider_issuer = $2',
      [userId, issuer],
    );
    return row?.subject;
  }

  /** Throws a unique violation when the subject or the account's slot at this issuer is taken. */
  async link(issuer: string, subject: string, userId: string, now: Date, db: Queryable = this.db): Promise<void> {
    await db.query(
      `INSERT INTO sso_identities (provider_issuer, subject, user_id, created_at, last_login_at)
       VALUES ($1, $2, $3, $4, $4)`,
      [issuer, subject, userId, now],
    );
  }

  async touch(issuer: string, subject: string, now: Date): Promise<void> {
    await this.db.query('UPDATE sso_identities SET last_login_at = $3 WHERE provider_issuer = $1 AND subject = $2', [
      issuer,
      subject,
      now,
    ]);
  }
}
