import type { Clock } from '../../platform/clock.ts';
import { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import type { Database } from '../../platform/db/database.ts';
import type { Logger } from '../../platform/log.ts';
import { PeriodicTask } from '../../platform/periodic-task.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import { deleteDiscardedFiles } from '../attachments/discarded-files.ts';
import { STAGING_BUCKET } from '../attachments/streamed-multipart.ts';
import { GUILD_AUDIT_RETENTION_MS } from '../chat/guild-audit.ts';
import { DERIVED_CACHE_BUCKET, EXTERNAL_CACHE_BUCKET, UPLOAD_BUCKET } from '../media/buckets.ts';
import { MAX_KEEP_MS } from '../media/external-cache.ts';
import { sweepExpiredSharedCache } from '../media/shared-cache.ts';
import { MFA_FAILURE_WINDOW_MS } from '../mfa/mfa-attempts.ts';

export interface JanitorDeps {
  db: Database;
  clock: Clock;
  objects: ObjectStore;
  log: Logger;
}

export interface JanitorOptions {
  /** Pause between automatic sweeps. */
  intervalMs?: number;
  /** How long a row stays after it expired, so a late use still meets the row and a late PUT its upload. */
  graceMs?: number;
  /** Rows deleted per statement: no sweep holds long locks or builds one huge transaction. */
  batchSize?: number;
  /** Batches per table per sweep; what is left waits for the next sweep. */
  maxBatches?: number;
}

export interface SweepReport {
  oneTimeTokens: number;
  oauth2Codes: number;
  oauth2Tokens: number;
  mfaAttempts: number;
  pendingUploads: number;
  /** Staged upload files a crashed or killed process left behind (docs/media.md#uploads-in-flight). */
  stagedObjects: number;
  /** Shared external-media and resized-image entries expired, or written more than a day ago (docs/media.md#external-media-cache). */
  externalCacheEntries: number;
  guildAuditEntries: number;
  /**
   * Files of deleted messages (a channel, thread, group DM or guild deleted with them, what a request left) and of
   * attachments edits dropped, that no forward shows any more (docs/media.md, Attachments).
   */
  attachmentFiles: number;
}

export const JANITOR_INTERVAL_MS = 60_000;
export const JANITOR_GRACE_MS = 3600_000;

/**
 * Deletes rows nobody can use any more: one-time tokens, OAuth2 codes and tokens, and relay uploads that
 * expired more than the grace period ago, with the bytes of those uploads, and MFA attempts outside the
 * failure window, and guild audit log entries older than Discord's 45 days, and the queued files of deleted
 * messages. A consumed token stays until it expires: until then a reuse finds the row (OAuth2 reuse detection
 * revokes the grant); afterwards reuse and expiry get the same answer as an unknown value.
 * Every statement is a bounded batch and safe to run from several processes at once.
 */
export class Janitor {
  private readonly task: PeriodicTask;
  private readonly graceMs: number;
  private readonly batchSize: number;
  private readonly maxBatches: number;

  constructor(
    private readonly deps: JanitorDeps,
    options: JanitorOptions = {},
  ) {
    this.graceMs = options.graceMs ?? JANITOR_GRACE_MS;
    this.batchSize = options.batchSize ?? 500;
    this.maxBatches = options.maxBatches ?? 20;
    this.task = new PeriodicTask({
      intervalMs: options.intervalMs ?? JANITOR_INTERVAL_MS,
      shouldRun: () => !this.clockRunsAhead(),
      run: async () => {
        const report = await this.sweep();
        if (Object.values(report).some((n) => n > 0)) this.deps.log.info('janitor swept', { ...report });
      },
      onError: (error) => {
        const causes = error instanceof AggregateError ? error.errors : [error];
        this.deps.log.error('janitor sweep failed', { errors: causes.map((cause) => (cause as Error).message) });
      },
    });
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  /**
   * The test harness can move the clock forward and back again. Rows an automatic sweep deleted at the
   * borrowed time would be missing once the clock is set back, so automatic sweeps wait for real time;
   * an explicit `sweep()` uses the clock as it is. In production the clock is never shifted.
   */
  private clockRunsAhead(): boolean {
    return this.deps.clock.now() - Date.now() > 1000;
  }

  /** One full pass; every table is tried even when another fails, then the failures are thrown together. */
  async sweep(): Promise<SweepReport> {
    const now = this.deps.clock.now();
    const cutoff = new Date(now - this.graceMs);
    const report: SweepReport = {
      oneTimeTokens: 0,
      oauth2Codes: 0,
      oauth2Tokens: 0,
      mfaAttempts: 0,
      pendingUploads: 0,
      stagedObjects: 0,
      externalCacheEntries: 0,
      guildAuditEntries: 0,
      attachmentFiles: 0,
    };
    const errors: unknown[] = [];
    const step = async (name: keyof SweepReport, run: () => Promise<number>) => {
      try {
        report[name] = await run();
      } catch (error) {
        errors.push(error);
      }
    };
    await step('oneTimeTokens', () => this.deleteExpired('one_time_tokens', 'token_hash', 'expires_at', cutoff));
    await step('oauth2Codes', () => this.deleteExpired('oauth2_codes', 'code_hash', 'expires_at', cutoff));
    await step('oauth2Tokens', () => this.deleteExpired('oauth2_tokens', 'token_hash', 'expires_at', cutoff));
    // An attempt counts only inside the failure window; older rows are dead weight.
    await step('mfaAttempts', () =>
      this.deleteExpired('mfa_attempts', 'id', 'attempted_at', new Date(now - MFA_FAILURE_WINDOW_MS - this.graceMs)),
    );
    await step('pendingUploads', () => this.deleteUploads(cutoff));
    // An upload in flight is younger than the request timeout; anything staged an hour ago is an orphan.
    await step('stagedObjects', async () => {
      const keys = await this.deps.objects.keysOlderThan(STAGING_BUCKET, cutoff.getTime(), this.batchSize);
      for (const key of keys) await this.deps.objects.delete(key);
      return keys.length;
    });
    // Expired entries give their bytes back to the budget; and no entry is kept longer than a day, so an object
    // written before that has expired, read or not (one whose row is gone, after a failed delete, included).
    await step('externalCacheEntries', async () => {
      const expired = await sweepExpiredSharedCache(
        this.deps.db,
        this.deps.objects,
        now,
        this.batchSize,
        this.maxBatches,
      );
      let orphans = 0;
      for (const bucket of [EXTERNAL_CACHE_BUCKET, DERIVED_CACHE_BUCKET]) {
        const keys = await this.deps.objects.keysOlderThan(bucket, now - MAX_KEEP_MS, this.batchSize);
        for (const key of keys) await this.deps.objects.delete(key);
        orphans += keys.length;
      }
      return expired + orphans;
    });
    // Entry ids are snowflakes: their time is in the primary key, so the age test is a range of it.
    await step('guildAuditEntries', () =>
      this.deleteExpired('guild_audit_log', 'id', 'id', SnowflakeGenerator.atTime(now - GUILD_AUDIT_RETENTION_MS)),
    );
    await step('attachmentFiles', () =>
      deleteDiscardedFiles(this.deps.db, this.deps.objects, {
        batchSize: this.batchSize,
        maxBatches: this.maxBatches,
      }),
    );
    if (errors.length > 0) throw new AggregateError(errors, 'janitor sweep failed');
    return report;
  }

  /** Deletes rows whose `timeColumn` lies before `cutoff` (a time, or a snowflake), batch by batch; returns how many went. */
  private async deleteExpired(table: string, key: string, timeColumn: string, cutoff: Date | string): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < this.maxBatches; batch += 1) {
      // SKIP LOCKED: rows another sweeper (or a request) holds are left for the next pass, not waited on.
      const rows = await this.deps.db.query(
        `DELETE FROM ${table} WHERE ${key} IN (
           SELECT ${key} FROM ${table} WHERE ${timeColumn} < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
         ) RETURNING 1`,
        [cutoff, this.batchSize],
      );
      total += rows.length;
      if (rows.length < this.batchSize) break;
    }
    return total;
  }

  /**
   * Abandoned relay uploads: the bytes go first, then the row, so a failure in between leaves a row that
   * the next sweep finds again rather than bytes nothing points to. Claimed rows are included: a claim that
   * failed for missing bytes leaves the row claimed, and bytes may still have arrived afterwards.
   */
  private async deleteUploads(cutoff: Date): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < this.maxBatches; batch += 1) {
      const rows = await this.deps.db.query<{ upload_key: string }>(
        'SELECT upload_key FROM pending_uploads WHERE expires_at < $1 ORDER BY expires_at LIMIT $2',
        [cutoff, this.batchSize],
      );
      if (rows.length === 0) break;
      const keys = rows.map((row) => row.upload_key);
      for (const key of keys) await this.deps.objects.delete(`${UPLOAD_BUCKET}/${key}`);
      const deleted = await this.deps.db.query(
        'DELETE FROM pending_uploads WHERE upload_key = ANY($1::text[]) RETURNING 1',
        [keys],
      );
      total += deleted.length;
      if (rows.length < this.batchSize) break;
    }
    return total;
  }
}
