import type { Database, Queryable } from '../../platform/db/database.ts';

export type HarvestStatus = 'pending' | 'running' | 'completed' | 'failed';

export interface HarvestRow {
  id: string;
  user_id: string;
  status: HarvestStatus;
  attempts: number;
  object_key: string | null;
  size_bytes: string | null;
  token_hash: string | null;
  link_expires_at: Date | null;
  downloaded_at: Date | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

const COLUMNS = `id, user_id, status, attempts, object_key, size_bytes, token_hash, link_expires_at, downloaded_at,
  created_at, updated_at, completed_at`;

/** The SQL of data exports (table `harvests`, migration 0155). */
export class HarvestStore {
  constructor(private readonly db: Database) {}

  /** The user's newest request, whatever its state. */
  async latest(userId: string, db: Queryable = this.db): Promise<HarvestRow | undefined> {
    const [row] = await db.query<HarvestRow>(
      `SELECT ${COLUMNS} FROM harvests WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [userId],
    );
    return row;
  }

  /** The newest request that counts for the cooldown: a failed one does not (the person may ask again). */
  async latestCounted(userId: string, db: Queryable): Promise<HarvestRow | undefined> {
    const [row] = await db.query<HarvestRow>(
      `SELECT ${COLUMNS} FROM harvests WHERE user_id = $1 AND status <> 'failed'
        ORDER BY created_at DESC, id DESC LIMIT 1`,
      [userId],
    );
    return row;
  }

  async find(id: string): Promise<HarvestRow | undefined> {
    const [row] = await this.db.query<HarvestRow>(`SELECT ${COLUMNS} FROM harvests WHERE id = $1`, [id]);
    return row;
  }

  /**
   * Requests one unless the cooldown still runs. The user's row is locked for the check and the insert, so two
   * concurrent requests cannot both pass. Returns the new row, or the one that blocks it.
   */
  async request(
    userId: string,
    id: string,
    now: number,
    cooldownMs: number,
  ): Promise<{ created: HarvestRow } | { blocking: HarvestRow }> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId]);
      const previous = await this.latestCounted(userId, tx);
      if (previous && previous.created_at.getTime() + cooldownMs > now) return { blocking: previous };
      const [created] = await tx.query<HarvestRow>(
        `INSERT INTO harvests (id, user_id, status, created_at, updated_at) VALUES ($1, $2, 'pending', $3, $3)
         RETURNING ${COLUMNS}`,
        [id, userId, new Date(now)],
      );
      return { created: created as HarvestRow };
    });
  }

  /**
   * Claims the oldest row to build: pending, or running with a lease that ran out (its process stopped).
   * Each claim counts an attempt; `SKIP LOCKED` lets several processes claim at once without waiting.
   */
  async claim(now: number, leaseMs: number): Promise<HarvestRow | undefined> {
    const [row] = await this.db.query<HarvestRow>(
      `UPDATE harvests SET status = 'running', attempts = attempts + 1, lease_until = $2, updated_at = $1
        WHERE id = (
          SELECT id FROM harvests
           WHERE status = 'pending' OR (status = 'running' AND lease_until < $1)
           ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}`,
      [new Date(now), new Date(now + leaseMs)],
    );
    return row;
  }

  /** Keeps a long build's claim; false when the row is no longer this build's (reclaimed or gone). */
  async renew(id: string, attempts: number, now: number, leaseMs: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE harvests SET lease_until = $4 WHERE id = $1 AND status = 'running' AND attempts = $2 AND lease_until >= $3
       RETURNING id`,
      [id, attempts, new Date(now), new Date(now + leaseMs)],
    );
    return rows.length === 1;
  }

  /** Finishes a build: only the claim that made it may (`attempts` names the claim). */
  async complete(
    id: string,
    attempts: number,
    done: { objectKey: string; sizeBytes: number; tokenHash: string; linkExpiresAt: number; now: number },
  ): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE harvests SET status = 'completed', object_key = $3, size_bytes = $4, token_hash = $5,
              link_expires_at = $6, completed_at = $7, updated_at = $7, lease_until = NULL
        WHERE id = $1 AND status = 'running' AND attempts = $2 RETURNING id`,
      [id, attempts, done.objectKey, done.sizeBytes, done.tokenHash, new Date(done.linkExpiresAt), new Date(done.now)],
    );
    return rows.length === 1;
  }

  /** A failed build goes back to the queue, or fails for good after `maxAttempts`. */
  async fail(id: string, attempts: number, maxAttempts: number, now: number): Promise<HarvestStatus> {
    const [row] = await this.db.query<{ status: HarvestStatus }>(
      `UPDATE harvests SET status = CASE WHEN attempts >= $3 THEN 'failed' ELSE 'pending' END,
              lease_until = NULL, updated_at = $4
        WHERE id = $1 AND status = 'running' AND attempts = $2 RETURNING status`,
      [id, attempts, maxAttempts, new Date(now)],
    );
    return row?.status ?? 'failed';
  }

  /** Gives a claim back at shutdown without spending the attempt. */
  async release(id: string, attempts: number, now: number): Promise<void> {
    await this.db.query(
      `UPDATE harvests SET status = 'pending', attempts = attempts - 1, lease_until = NULL, updated_at = $3
        WHERE id = $1 AND status = 'running' AND attempts = $2`,
      [id, attempts, new Date(now)],
    );
  }

  /**
   * Running rows whose lease ran out after the last attempt: nobody will claim them again, so they fail now
   * (the person may ask again at once).
   */
  async failExhausted(now: number, maxAttempts: number): Promise<number> {
    const rows = await this.db.query(
      `UPDATE harvests SET status = 'failed', lease_until = NULL, updated_at = $1
        WHERE status = 'running' AND lease_until < $1 AND attempts >= $2 RETURNING id`,
      [new Date(now), maxAttempts],
    );
    return rows.length;
  }

  /**
   * Marks a completed harvest downloaded, once: a second or concurrent use gets undefined. Returns the object
   * key to serve (the caller deletes the bytes after sending them).
   */
  async consume(id: string, tokenHash: string, now: number): Promise<{ objectKey: string } | undefined> {
    const [row] = await this.db.query<{ object_key: string }>(
      `UPDATE harvests SET downloaded_at = $3, updated_at = $3
        WHERE id = $1 AND token_hash = $2 AND status = 'completed' AND downloaded_at IS NULL
          AND link_expires_at > $3 AND object_key IS NOT NULL
        RETURNING object_key`,
      [id, tokenHash, new Date(now)],
    );
    return row ? { objectKey: row.object_key } : undefined;
  }

  /**
   * Stored archives nobody may fetch any more: downloaded, link expired, or the account deleted. A bounded
   * batch; the caller deletes the bytes, then `forget`s the key.
   */
  async unreachableObjects(
    now: number,
    deletedFlag: bigint,
    limit: number,
  ): Promise<{ id: string; object_key: string }[]> {
    return this.db.query<{ id: string; object_key: string }>(
      `SELECT h.id, h.object_key FROM harvests h JOIN users u ON u.id = h.user_id
        WHERE h.object_key IS NOT NULL
          AND (h.downloaded_at IS NOT NULL OR h.link_expires_at <= $1 OR (u.flags & $2::bigint) <> 0)
        ORDER BY h.link_expires_at LIMIT $3`,
      [new Date(now), deletedFlag.toString(), limit],
    );
  }

  async forget(id: string, objectKey: string): Promise<void> {
    await this.db.query('UPDATE harvests SET object_key = NULL WHERE id = $1 AND object_key = $2', [id, objectKey]);
  }
}
