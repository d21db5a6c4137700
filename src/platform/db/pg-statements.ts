import pg from 'pg';
import { digest } from '../crypto/tokens.ts';
import type { Queryable } from './database.ts';

// int8 as decimal strings: snowflakes and 64-bit flag fields must not lose precision.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => value);

/** Distinct statements prepared per connection at most; later ones run unnamed (parsed every time). */
const MAX_NAMED_STATEMENTS = 2_000;
const names = new Map<string, string>();
/** PostgreSQL's answer when a prepared `SELECT *` meets a table that a migration has since changed. */
const CACHED_PLAN_CHANGED = '0A000';
let renames = 0;

/**
 * A stable name for a parameterised statement, so each connection parses and plans it once and later runs
 * only bind and execute. Statement texts are a fixed set written in the code (a few vary by which optional
 * filters are present), so the table stays small; the cap guards against a text built from data.
 */
export function statementName(sql: string): string | undefined {
  const known = names.get(sql);
  if (known !== undefined || names.size >= MAX_NAMED_STATEMENTS) return known;
  const name = baseName(sql);
  names.set(sql, name);
  return name;
}

function baseName(sql: string): string {
  return `h${digest(sql).slice(0, 22)}`;
}

/**
 * After another process migrated the schema, a connection's prepared statement may no longer fit its table:
 * the statement gets a new name, so every connection prepares it afresh.
 */
function renameStatement(sql: string): string {
  renames += 1;
  const name = `${baseName(sql)}_${renames}`;
  names.set(sql, name);
  return name;
}

/** `Queryable` over a node-postgres client or pool; parameterised statements run as named statements. */
export function pgQueryable(target: Pick<pg.Pool | pg.ClientBase, 'query'>): Queryable {
  return {
    async query<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
      const values = params && params.length > 0 ? [...params] : undefined;
      const name = values ? statementName(sql) : undefined;
      try {
        const result = await target.query(name ? { name, text: sql, values } : { text: sql, values });
        return result.rows as T[];
      } catch (error) {
        if (!name || (error as { code?: string }).code !== CACHED_PLAN_CHANGED) throw error;
        const result = await target.query({ name: renameStatement(sql), text: sql, values });
        return result.rows as T[];
      }
    },
    async exec(sql: string): Promise<void> {
      await target.query(sql);
    },
  };
}
