import { count, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "./client";

export interface Page {
  limit: number;
  offset: number;
}

/**
 * One page of a table's rows matching `where`, in `order`, with the number of all matching rows
 * (the two queries run together). The shape every paged list of the API answers from.
 */
export async function pageOf<T extends SQLiteTable>(
  db: Database,
  table: T,
  where: SQL | undefined,
  order: Array<SQL | SQLiteColumn>,
  page: Page,
): Promise<{ rows: T["$inferSelect"][]; total: number }> {
  const [rows, total] = await Promise.all([
    db.select().from(table as SQLiteTable).where(where).orderBy(...order).limit(page.limit).offset(page.offset).all(),
    db.select({ n: count() }).from(table as SQLiteTable).where(where).get(),
  ]);
  return { rows: rows as T["$inferSelect"][], total: total?.n ?? 0 };
}
