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

type DrizzleBatchItem = Parameters<Database["batch"]>[0][number];
interface PreparedForBatch {
  stmt: D1PreparedStatement;
  getQuery(): { sql: string; params: unknown[] };
  mapResult(result: unknown, isFromBatch: boolean): unknown;
}

/**
 * A drizzle query as a raw D1 statement for a batch of raw statements (the answer's final write, whose statements
 * other stages add to), with the mapping of its result to what the query itself would return. It does what
 * drizzle's own `db.batch` does with each query (drizzle-orm/d1/session.js: `_prepare`, `getQuery`, `mapResult`).
 */
export function batchStatement<T>(db: Database, query: DrizzleBatchItem & PromiseLike<T>): { stmt: D1PreparedStatement; map(result: D1Result): T } {
  const prepared = (query as unknown as { _prepare(): PreparedForBatch })._prepare();
  const { sql, params } = prepared.getQuery();
  return { stmt: db.$client.prepare(sql).bind(...params), map: (result) => prepared.mapResult(result, true) as T };
}

/**
 * A raw `sql` statement as an item of drizzle's own `db.batch`, its result the statement's D1Result (drizzle's
 * `db.run(sql)` cannot be batched with values: it has no prepared statement to bind). Awaited alone, a batch of one.
 */
export function rawBatchItem(db: Database, statement: SQL): DrizzleBatchItem & PromiseLike<D1Result> {
  const { sql, params } = dialect.sqlToQuery(statement);
  const item = {
    _prepare: () => ({ stmt: db.$client.prepare(sql), getQuery: () => ({ sql, params }), mapResult: (result: unknown) => result }),
    then<R1, R2>(onFulfilled?: (v: D1Result) => R1 | PromiseLike<R1>, onRejected?: (e: unknown) => R2 | PromiseLike<R2>) {
      return db.batch([item as unknown as DrizzleBatchItem]).then(([result]) => result as D1Result).then(onFulfilled, onRejected);
    },
  };
  return item as unknown as DrizzleBatchItem & PromiseLike<D1Result>;
}
