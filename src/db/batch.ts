import type { SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import type { Database } from "./client";

const dialect = new SQLiteAsyncDialect();

/**
 * Runs raw `sql` statements as one D1 batch: one round trip, executed as a
 * single transaction (D1 has no interactive transactions).
 */
export async function batchSql(db: Database, statements: SQL[]): Promise<D1Result[]> {
  if (!statements.length) return [];
  const d1 = db.$client;
  return d1.batch(
    statements.map((s) => {
      const q = dialect.sqlToQuery(s);
      return d1.prepare(q.sql).bind(...(q.params as unknown[]));
    }),
  );
}
