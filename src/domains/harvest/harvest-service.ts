import { USER_FLAGS } from '../../identity/flags.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SnowflakeGenerator } from '../../platform/crypto/snowflake.ts';
import { digest, randomBase62 } from '../../platform/crypto/tokens.ts';
import type { Database } from '../../platform/db/database.ts';
import type { Logger } from '../../platform/log.ts';
import type { ObjectStore } from '../../platform/storage/object-store.ts';
import type { AccountEmails } from '../email/account-emails.ts';
import { linkPath } from './download-link.ts';
import {
  buildHarvestArchive,
  DEFAULT_HARVEST_LIMITS,
  HARVEST_CONTENT_TYPE,
  HARVEST_FILE_SUFFIX,
  type HarvestLimits,
} from './harvest-archive.ts';
import { HarvestSource } from './harvest-source.ts';
import { type HarvestRow, type HarvestStatus, HarvestStore } from './harvest-store.ts';

export interface HarvestDeps {
  db: Database;
  clock: Clock;
  ids: SnowflakeGenerator;
  objects: ObjectStore;
  emails: AccountEmails;
  log: Logger;
  /** Where the download link points (the API's public origin), read when a link is made. */
  publicUrl: () => string;
  /** Signs download links (a key is derived from it: docs/accounts.md#your-data-data-export). */
  linkSecret: string;
}

export interface HarvestOptions {
  /** One request per this long (a failed one does not count). */
  cooldownMs?: number;
  /** How long the emailed link works. */
  linkTtlMs?: number;
  /** Pause between the worker's automatic looks at the queue (a request also wakes it at once). */
  intervalMs?: number;
  /** A build's claim lasts this long without renewal; a process that died frees its job after it. */
  leaseMs?: number;
  /** Claims of one job before it fails for good. */
  maxAttempts?: number;
  limits?: HarvestLimits;
}

export const HARVEST_COOLDOWN_MS = 24 * 3600_000;
export const HARVEST_LINK_TTL_MS = 7 * 24 * 3600_000;

/** The build was stopped on purpose (shutdown, or another process took the job over): not a failure. */
class BuildAbandoned extends Error {}

/** A data export request as its owner sees it (`HarvestService.view`, docs/accounts.md#your-data-data-export). */
export type HarvestView = {
  harvest_id: string;
  user_id: string;
  status: HarvestStatus;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  size_bytes: number | null;
  link_expires_at: string | null;
  downloaded: boolean;
  next_request_at: string | null;
};

/**
 * Data exports: requests, the background builder and the download. One build at a time per process; jobs
 * live in the database, so a restart (or another process) picks up what was pending, and a build whose
 * process died is claimed again once its lease ran out, up to `maxAttempts` claims.
 */
export class HarvestService {
  readonly store: HarvestStore;
  private readonly source: HarvestSource;
  readonly cooldownMs: number;
  private readonly linkTtlMs: number;
  private readonly intervalMs: number;
  private readonly leaseMs: number;
  private readonly maxAttempts: number;
  private readonly limits: HarvestLimits;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopping = false;

  constructor(
    private readonly deps: HarvestDeps,
    options: HarvestOptions = {},
  ) {
    this.store = new HarvestStore(deps.db);
    this.source = new HarvestSource(deps.db);
    this.cooldownMs = options.cooldownMs ?? HARVEST_COOLDOWN_MS;
    this.linkTtlMs = options.linkTtlMs ?? HARVEST_LINK_TTL_MS;
    this.intervalMs = options.intervalMs ?? 30_000;
    this.leaseMs = options.leaseMs ?? 5 * 60_000;
    this.maxAttempts = options.maxAttempts ?? 3;
    this.limits = options.limits ?? DEFAULT_HARVEST_LIMITS;
  }

  start(): void {
    if (this.timer) return;
    this.stopping = false;
    this.timer = setInterval(() => this.wake(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer; a build in flight is abandoned at its next page and goes back to the queue. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  nextId(): string {
    return this.deps.ids.next();
  }

  /** Looks at the queue now (after a request), or once more after the run in flight. */
  wake(): void {
    if (this.stopping) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((error: unknown) => this.deps.log.error('harvest worker failed', { error: (error as Error).message }))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Builds queued jobs one after another (at most 10 a run), then deletes archives nobody may fetch. */
  private async drain(): Promise<void> {
    const now = this.deps.clock.now();
    const exhausted = await this.store.failExhausted(now, this.maxAttempts);
    if (exhausted > 0) this.deps.log.warn('harvests failed after their last attempt', { count: exhausted });
    for (let i = 0; i < 10 && !this.stopping; i += 1) {
      const job = await this.store.claim(this.deps.clock.now(), this.leaseMs);
      if (!job) break;
      await this.build(job);
    }
    await this.sweep();
  }

  private async build(job: HarvestRow): Promise<void> {
    const { clock, objects, log } = this.deps;
    const objectKey = `harvests/${job.user_id}/${job.id}${HARVEST_FILE_SUFFIX}`;
    try {
      const account = await this.source.account(job.user_id);
      const email = typeof account?.email === 'string' ? account.email : undefined;
      const deleted = account ? (BigInt(String(account.flags)) & USER_FLAGS.DELETED) !== 0n : true;
      if (!email || deleted) {
        // Nobody could receive the link: fail at once rather than retry.
        await this.store.fail(job.id, job.attempts, 0, clock.now());
        return;
      }
      const bytes = await buildHarvestArchive(
        this.source,
        {
          harvestId: job.id,
          userId: job.user_id,
          now: clock.now(),
          keepAlive: async () => {
            if (this.stopping) throw new BuildAbandoned('stopping');
            if (!(await this.store.renew(job.id, job.attempts, clock.now(), this.leaseMs)))
              throw new BuildAbandoned('claim lost');
          },
        },
        this.limits,
      );
      await objects.put(objectKey, bytes, HARVEST_CONTENT_TYPE);
      const token = randomBase62(64);
      const now = clock.now();
      const expiresMs = now + this.linkTtlMs;
      const done = await this.store.complete(job.id, job.attempts, {
        objectKey,
        sizeBytes: bytes.length,
        tokenHash: digest(token),
        linkExpiresAt: expiresMs,
        now,
      });
      if (!done) {
        await objects.delete(objectKey);
        return;
      }
      const url = `${this.deps.publicUrl()}${linkPath(this.deps.linkSecret, {
        harvestId: job.id,
        expires: Math.floor(expiresMs / 1000),
        token,
      })}`;
      await this.deps.emails.sendHarvestReady(email, url, { harvest_id: job.id });
      log.info('harvest completed', { harvest_id: job.id, bytes: bytes.length });
    } catch (error) {
      if (error instanceof BuildAbandoned) {
        // Shutdown gives the claim back without spending an attempt; a lost claim belongs to someone else.
        if (error.message === 'stopping') await this.store.release(job.id, job.attempts, clock.now());
        return;
      }
      await objects.delete(objectKey).catch(() => {});
      const status = await this.store.fail(job.id, job.attempts, this.maxAttempts, clock.now());
      log.error('harvest build failed', { harvest_id: job.id, status, error: (error as Error).message });
    }
  }

  /** Deletes the bytes of downloaded, expired and deleted accounts' archives, a bounded batch per run. */
  private async sweep(): Promise<void> {
    const stale = await this.store.unreachableObjects(this.deps.clock.now(), USER_FLAGS.DELETED, 100);
    for (const row of stale) {
      await this.deps.objects.delete(row.object_key);
      await this.store.forget(row.id, row.object_key);
    }
  }

  /** The wire form of a harvest (docs/accounts.md#your-data-data-export). */
  view(row: HarvestRow): HarvestView {
    const counted = row.status !== 'failed';
    return {
      harvest_id: row.id,
      user_id: row.user_id,
      status: row.status,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
      completed_at: row.completed_at?.toISOString() ?? null,
      size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
      link_expires_at: row.link_expires_at?.toISOString() ?? null,
      downloaded: row.downloaded_at !== null,
      next_request_at: counted ? new Date(row.created_at.getTime() + this.cooldownMs).toISOString() : null,
    };
  }
}
