import { hostname } from 'node:os';
import { randomBase62 } from '../crypto/tokens.ts';
import type { Logger } from '../log.ts';
import type { Database } from './database.ts';

const LEASE_SECONDS = 30;
const RENEW_EVERY_MS = 10_000;
const WORKER_IDS = 1024;

export interface NodeLeaseOptions {
  /** The worker id asked for (`HEARTH_WORKER_ID`); another is taken when a live process holds it. */
  preferredWorkerId: number;
  /** Where this process keeps objects: `s3:<bucket>` or `local:<path>`. */
  objectStore: string;
  /** The operator declared the local object directory shared between nodes (`HEARTH_SHARED_OBJECT_DIR`). */
  sharedObjectDir: boolean;
  log: Logger;
  /** Called when the lease was lost (the process stalled past its expiry and another took the id). */
  onLost: () => void;
}

export class NodeLeaseRefused extends Error {}

interface LiveNode {
  worker_id: number;
  host: string;
  pid: number;
  object_store: string;
}

/**
 * A lease on a snowflake worker id in the shared database (table `node_leases`): claimed at start, renewed
 * every 10 s, expiring 30 s after the last renewal, released at shutdown. Two live processes never hold one
 * id, so they never mint the same snowflake. At start it also refuses a second node whose objects would be
 * on a local disk the others cannot read.
 */
export class NodeLease {
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly db: Database,
    readonly workerId: number,
    private readonly node: string,
  ) {}

  static async acquire(db: Database, options: NodeLeaseOptions): Promise<NodeLease> {
    const node = randomBase62(16);
    // The embedded database has one process (its data-directory lock says so): any lease left is a dead one's.
    if (db.kind === 'pglite') await db.query('DELETE FROM node_leases');
    await forgetDeadLocalProcesses(db);
    const others = await db.query<LiveNode>(
      'SELECT worker_id, host, pid, object_store FROM node_leases WHERE expires_at > now() ORDER BY worker_id',
    );
    const localHere = options.objectStore.startsWith('local:');
    const localThere = others.find((other) => other.object_store.startsWith('local:'));
    if (others.length > 0 && (localHere || localThere) && !options.sharedObjectDir) {
      const other = others[0] as LiveNode;
      throw new NodeLeaseRefused(
        `another Hearth process (pid ${other.pid} on ${other.host}) uses this database, and uploads would be kept on ` +
          "each process's own disk: set HEARTH_S3_BUCKET (an S3-compatible store) on every process, or " +
          'HEARTH_SHARED_OBJECT_DIR=true if HEARTH_DATA_DIR/objects is one shared directory',
      );
    }
    const taken = new Set(others.map((other) => other.worker_id));
    const candidates = [options.preferredWorkerId, ...Array.from({ length: WORKER_IDS }, (_, id) => id)];
    for (const id of candidates) {
      if (taken.has(id)) continue;
      const [row] = await db.query<{ worker_id: number }>(
        `INSERT INTO node_leases (worker_id, node, host, pid, object_store, expires_at)
         VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
         ON CONFLICT (worker_id) DO UPDATE
           SET node = EXCLUDED.node, host = EXCLUDED.host, pid = EXCLUDED.pid, object_store = EXCLUDED.object_store,
               started_at = now(), expires_at = EXCLUDED.expires_at
         WHERE node_leases.expires_at <= now()
         RETURNING worker_id`,
        [id, node, hostname(), process.pid, options.objectStore, LEASE_SECONDS],
      );
      if (!row) continue;
      if (id !== options.preferredWorkerId)
        options.log.warn('worker id taken by another live process; using another', {
          asked: options.preferredWorkerId,
          worker_id: id,
        });
      const lease = new NodeLease(db, id, node);
      lease.timer = setInterval(() => {
        lease.renew().then(
          (held) => {
            if (!held) options.onLost();
          },
          (error: Error) => options.log.warn('worker lease renewal failed', { error: error.message }),
        );
      }, RENEW_EVERY_MS);
      lease.timer.unref();
      return lease;
    }
    throw new NodeLeaseRefused('all 1024 worker ids are leased by live processes');
  }

  /** False when the lease is gone: another process holds the id now. */
  async renew(): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE node_leases SET expires_at = now() + make_interval(secs => $3)
        WHERE worker_id = $1 AND node = $2 RETURNING 1`,
      [this.workerId, this.node, LEASE_SECONDS],
    );
    return rows.length === 1;
  }

  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.db.query('DELETE FROM node_leases WHERE worker_id = $1 AND node = $2', [this.workerId, this.node]);
  }
}

/** A lease of a process on this host that is no longer running (killed before it could release) is dropped. */
async function forgetDeadLocalProcesses(db: Database): Promise<void> {
  const mine = await db.query<{ worker_id: number; pid: number }>(
    'SELECT worker_id, pid FROM node_leases WHERE host = $1 AND expires_at > now()',
    [hostname()],
  );
  for (const lease of mine) {
    if (lease.pid === process.pid || isRunning(lease.pid)) continue;
    await db.query('DELETE FROM node_leases WHERE worker_id = $1 AND host = $2 AND pid = $3', [
      lease.worker_id,
      hostname(),
      lease.pid,
    ]);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
