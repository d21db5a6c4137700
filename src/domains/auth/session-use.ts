import type { Queryable } from '../../platform/db/database.ts';

/**
 * Sessions' last-used times, written in batches. A session is touched on its first use in each minute by
 * every process; writing each touch as its own UPDATE made a burst of fresh identifies (a gateway restart,
 * a login wave) pay a write per connection. The value is advisory (the sessions list rounds it to the
 * hour), so a few seconds of delay cost nothing.
 */
export class SessionUseBatch {
  private pending = new Map<string, Date>();
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Queryable,
    intervalMs = 2_000,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  record(sessionId: string, at: Date): void {
    this.pending.set(sessionId, at);
  }

  /** Writes what is pending in one statement; failures are dropped (the next use writes again). */
  flush(): Promise<void> {
    if (this.pending.size === 0) return this.flushing;
    const batch = this.pending;
    this.pending = new Map();
    const ids = [...batch.keys()];
    const times = ids.map((id) => (batch.get(id) as Date).toISOString());
    this.flushing = this.flushing.then(() =>
      this.db
        .query(
          `UPDATE sessions s SET last_used_at = GREATEST(s.last_used_at, v.at)
             FROM unnest($1::bigint[], $2::timestamptz[]) AS v(id, at) WHERE s.id = v.id`,
          [ids, times],
        )
        .then(
          () => undefined,
          () => undefined,
        ),
    );
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
