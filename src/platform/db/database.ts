/** What every module sees of storage: PostgreSQL-dialect SQL with `$n` parameters, on PGlite or a server. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `work` in one transaction; it commits when `work` resolves and rolls back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** Connections of a server's pool (the `hearth_db_pool_connections` metric); PGlite has none. */
  poolStats?(): { total: number; idle: number; waiting: number };
}

/** PostgreSQL's unique-violation SQLSTATE, raised the same way by PGlite and by a server. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
