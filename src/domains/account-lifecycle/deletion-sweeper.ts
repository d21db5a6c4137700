import type { AppServices } from '../../app-services.ts';
import { USER_FLAGS } from '../../identity/flags.ts';
import { PeriodicTask } from '../../platform/periodic-task.ts';

/** What `DeletionSweeper` uses of the composition root's services (docs/architecture.md#narrow-dependencies). */
export type DeletionSweeperDeps = Pick<AppServices, 'clock' | 'db' | 'ipAuthorization' | 'log' | 'mfa' | 'sessions'>;

/**
 * Finalises self-deletions whose grace period has run out: the account keeps its id and profile shell
 * with the DELETED flag, loses its address, password, second factors, sessions, OAuth2 grants and
 * pending tokens. Each account is claimed with one conditional UPDATE, so several processes can sweep.
 */
export class DeletionSweeper {
  private readonly task: PeriodicTask;

  constructor(
    private readonly services: DeletionSweeperDeps,
    intervalMs: number,
  ) {
    this.task = new PeriodicTask({
      intervalMs,
      run: async () => {
        await this.sweep();
      },
      onError: (error) => this.services.log.error('deletion sweep failed', { error: (error as Error).message }),
    });
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /** Finalises every due deletion; returns how many accounts it finalised. */
  async sweep(): Promise<number> {
    const { db, clock } = this.services;
    const due = await db.query<{ id: string }>(
      `SELECT id FROM users
        WHERE pending_deletion_at IS NOT NULL AND pending_deletion_at <= $1 AND (flags & $2::bigint) = 0
        ORDER BY pending_deletion_at LIMIT 100`,
      // Self-deletions and operator-scheduled deletions (admin schedule-deletion) alike.
      [new Date(clock.now()), USER_FLAGS.DELETED.toString()],
    );
    let done = 0;
    for (const { id } of due) if (await this.finalise(id)) done += 1;
    return done;
  }

  async finalise(userId: string): Promise<boolean> {
    const { db, clock, mfa, sessions } = this.services;
    const claimed = await db.transaction(async (tx) => {
      const rows = await tx.query(
        `UPDATE users SET flags = flags | $2::bigint, email = NULL, email_verified = false, password_hash = NULL,
                pending_deletion_at = NULL
          WHERE id = $1 AND pending_deletion_at IS NOT NULL AND pending_deletion_at <= $3 AND (flags & $2::bigint) = 0
          RETURNING id`,
        [userId, USER_FLAGS.DELETED.toString(), new Date(clock.now())],
      );
      if (rows.length === 0) return false;
      await tx.query('DELETE FROM oauth2_grants WHERE user_id = $1', [userId]);
      await this.services.ipAuthorization.forgetAll(userId, tx);
      await tx.query('DELETE FROM one_time_tokens WHERE user_id = $1', [userId]);
      await mfa.removeAllFactors(userId, tx);
      return true;
    });
    if (!claimed) return false;
    await sessions.revokeAll(userId);
    return true;
  }
}
