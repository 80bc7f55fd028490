import { sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Env } from "../../env";
import { ApiError } from "../../lib/errors";
import { registerCleanup } from "../cleanup";
import type { Cell } from "./infer";
import type { KbTables } from "./store";
import type { TableInfo } from "./catalog";

/** Rows a query returns at most (more -> the first ones and `truncated`). */
export const SQL_MAX_ROWS = 1_000;
/** A query answers within this or fails with query_timeout. */
export const SQL_TIMEOUT_MS = 5_000;

/** The knowledge base's store: one Durable Object per knowledge base id, so a knowledge base only ever reaches its own tables. */
export function tablesStore(env: Env, kbId: string): DurableObjectStub<KbTables> {
  return env.KB_TABLES.get(env.KB_TABLES.idFromName(kbId));
}

/**
 * Drops the tables of documents that are gone (deleted, or removed with their
 * row): the delete path drops them at once, this catches a cleanup that was
 * cut short or a processing run that committed after a concurrent delete.
 */
export async function reconcileTables(env: Env, db: Database, kbId: string): Promise<void> {
  const store = tablesStore(env, kbId);
  const ids = await store.documentIds();
  if (!ids.length) return;
  const live = new Set(
    (
      await db.all<{ id: string }>(sql`
        SELECT id FROM documents WHERE knowledge_base_id = ${kbId} AND status <> 'deleted'
          AND id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`)
    ).map((r) => r.id),
  );
  for (const id of ids) if (!live.has(id)) await store.dropDocument(id);
}

/**
 * Whether the knowledge base has a live document that can hold tables (CSV,
 * XLSX, JSON). Turns ask this first, so a knowledge base without data files
 * never wakes (or creates) a store.
 */
export async function hasTabularDocuments(db: Database, kbId: string): Promise<boolean> {
  const row = await db.get<{ n: number }>(sql`SELECT 1 AS n FROM documents WHERE ${tabularDocumentWhere(kbId)} LIMIT 1`);
  return !!row;
}

/** The condition of `hasTabularDocuments` on `documents` (also read in a turn's one batch). */
export function tabularDocumentWhere(kbId: string | SQL): SQL {
  return sql`knowledge_base_id = ${kbId} AND status <> 'deleted' AND parent_document_id IS NULL
      AND (lower(filename) LIKE '%.csv' OR lower(filename) LIKE '%.xlsx' OR lower(filename) LIKE '%.json'
        OR mime_type IN ('text/csv', 'application/csv', 'application/json', 'text/json',
          'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'))`;
}

export interface PublicTable {
  name: string;
  document_id: string;
  filename: string;
  sheet: string | null;
  columns: Array<{ name: string; type: "integer" | "real" | "text"; format?: "date" | "datetime"; source_name: string }>;
  row_count: number;
  truncated: boolean;
}

export function publicTable(t: TableInfo): PublicTable {
  return {
    name: t.name,
    document_id: t.document_id,
    filename: t.filename,
    sheet: t.part,
    columns: t.columns.map((c) => ({ name: c.name, type: c.type, ...(c.format ? { format: c.format } : {}), source_name: c.source })),
    row_count: t.row_count,
    truncated: t.truncated,
  };
}

/** The knowledge base's tables (after dropping those of deleted documents). */
export async function listKbTables(env: Env, db: Database, kbId: string): Promise<TableInfo[]> {
  await reconcileTables(env, db, kbId);
  return tablesStore(env, kbId).listTables();
}

export interface SqlResult {
  columns: string[];
  rows: Cell[][];
  row_count: number;
  truncated: boolean;
}

/**
 * Runs one read-only query on the knowledge base's store (see KbTables.query
 * for what the database refuses). The time limit is enforced here, where the
 * caller waits: past it the answer is 400 query_timeout whatever the store is
 * still doing (it finishes, or the Durable Object's CPU limit stops it).
 */
export async function runSql(
  env: Env,
  db: Database,
  kbId: string,
  query: string,
  opts: { maxRows?: number; timeoutMs?: number; reconcile?: boolean } = {},
): Promise<SqlResult> {
  const maxRows = opts.maxRows ?? SQL_MAX_ROWS;
  const timeoutMs = opts.timeoutMs ?? SQL_TIMEOUT_MS;
  if (opts.reconcile !== false) await reconcileTables(env, db, kbId);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  let outcome;
  try {
    outcome = await Promise.race([tablesStore(env, kbId).query(query, { maxRows, timeoutMs }), timeout]);
  } catch (e) {
    // The store was reset under the query (its CPU limit): that is a query that ran too long.
    const message = e instanceof Error ? e.message : String(e);
    if (/exceeded|CPU|reset/i.test(message)) throw new ApiError("query_timeout", `The query ran longer than allowed (${message.slice(0, 200)})`);
    throw e;
  } finally {
    clearTimeout(timer);
  }
  if (outcome === "timeout") throw new ApiError("query_timeout", `The query ran longer than ${timeoutMs / 1000} s`);
  if (!outcome.ok) throw new ApiError(outcome.code, outcome.message);
  return { columns: outcome.columns, rows: outcome.rows, row_count: outcome.row_count, truncated: outcome.truncated };
}

/** After DELETE /documents/:id (best effort: reconciliation finishes what this misses). */
export async function dropDocumentTables(env: Env, kbId: string, documentId: string): Promise<void> {
  await tablesStore(env, kbId).dropDocument(documentId);
}

// Deleting a knowledge base, tenant or organization empties the stores of the
// knowledge bases concerned (looked up while their rows still exist).
registerCleanup("knowledge_base", async ({ env, waitUntil }, id) => {
  waitUntil(tablesStore(env, id).drop().catch((e) => console.warn(`dropping the tables of ${id} failed:`, e)));
});
for (const kind of ["tenant", "organization"] as const) {
  registerCleanup(kind, async ({ db, env, waitUntil }, id) => {
    const column = kind === "tenant" ? sql`tenant_id` : sql`organization_id`;
    const kbs = await db.all<{ id: string }>(sql`SELECT id FROM knowledge_bases WHERE ${column} = ${id}`);
    waitUntil(
      Promise.all(kbs.map((kb) => tablesStore(env, kb.id).drop())).catch((e) => console.warn(`dropping tables under ${kind} ${id} failed:`, e)),
    );
  });
}
