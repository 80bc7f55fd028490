import { fillPlaceholders, sql, type Placeholder } from "drizzle-orm";
import { createDb, type Database } from "./client";

/**
 * A drizzle query of a hot path whose SQL is built once per isolate instead of on every call (README "Latency":
 * building a select costs drizzle more CPU than sending it). The query is written once with placeholders for its
 * values (`p("id")`); each call fills them and gives a batch item that drizzle's own `db.batch` takes like the
 * query itself (its `_prepare` contract: the statement, the filled query, the mapping of its rows). So a
 * compiled query batches with others and carries a rider (src/db/rider.ts) exactly as the query would.
 *
 * Only for queries whose shape never depends on the values: the same SQL text for every call. Awaited alone, a
 * compiled query is a batch of one.
 */
type BatchItem = Parameters<Database["batch"]>[0][number];
/** What a compiled query gives: an item for `db.batch`, or awaited alone; never a builder to chain or run otherwise. */
export type CompiledItem<T> = { readonly _: { readonly dialect: "sqlite"; readonly result: T } } & PromiseLike<T>;

interface Prepared {
  getQuery(): { sql: string; params: unknown[] };
  mapResult(result: unknown, isFromBatch?: boolean): unknown;
}

/** A value filled in on each call. */
export const p = (name: string): Placeholder => sql.placeholder(name);

/** Queries are built on a handle that sends nothing (building prepares a statement drizzle never runs). */
const builder = createDb({ prepare: () => ({}) } as unknown as D1Database);

/** Compiles queries whose placeholders take values of type V: `const compile = compiler<{ id: string }>()`. */
export const compiler =
  <V extends Record<string, unknown>>() =>
  <Q extends BatchItem>(build: (db: Database) => Q) =>
    compiledQuery<V, Q>(build);

export function compiledQuery<V extends Record<string, unknown>, Q extends BatchItem>(build: (db: Database) => Q) {
  let shape: { sql: string; params: unknown[]; prepared: Prepared } | null = null;
  return (db: Database, values: V): CompiledItem<Q["_"]["result"]> => {
    if (!shape) {
      const prepared = (build(builder) as unknown as { _prepare(): Prepared })._prepare();
      shape = { ...prepared.getQuery(), prepared };
    }
    const { sql: text, params, prepared } = shape;
    const filled = fillPlaceholders(params, values);
    const item = {
      _prepare: () => ({
        stmt: db.$client.prepare(text),
        getQuery: () => ({ sql: text, params: filled }),
        mapResult: (result: unknown, isFromBatch?: boolean) => prepared.mapResult(result, isFromBatch),
      }),
      then<R1, R2>(onFulfilled?: (v: Q["_"]["result"]) => R1 | PromiseLike<R1>, onRejected?: (e: unknown) => R2 | PromiseLike<R2>) {
        return db.batch([item as unknown as BatchItem]).then(([rows]) => rows as Q["_"]["result"]).then(onFulfilled, onRejected);
      },
    };
    return item as unknown as CompiledItem<Q["_"]["result"]>;
  };
}
