import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Env } from "../../env";
import { registerRecovery } from "../recovery/supervisor";
import { dropDocumentTables, tablesStore } from "../tables/service";
import { vectorIndexFor } from "../vector-index";
import { drainGarbage, purgeStaleChunks } from "./cleanup";
import { detectKind } from "./types";

/**
 * The cleanup tasks deletions leave (migrations/0015: recorded by trigger in the deleting statement itself, so a
 * crash right after a delete cannot lose them): a deleted document's chunks (their vectors then go on the garbage
 * list) and tables; a removed knowledge base's vector index and tables. Each task is idempotent and removed once
 * done; the supervisor works through what is left, so nothing depends on a request's background work surviving.
 */

const TASKS_PER_PASS = 20;
/** Chunks removed per document per pass (the chunk triggers record their vectors). */
const CHUNKS_PER_PASS = 2_000;

type TaskRow = { id: number; kind: "document" | "knowledge_base"; ref: string; knowledge_base_id: string };

const TABULAR = new Set(["csv", "xlsx", "json"]);

/** A deleted document: its chunks, then its tables (if its knowledge base still exists). True when done. */
async function cleanUpDocument(env: Env, db: Database, t: TaskRow): Promise<boolean> {
  if ((await purgeStaleChunks(db, { documentIds: [t.ref], limit: CHUNKS_PER_PASS })) >= CHUNKS_PER_PASS) return false;
  const doc = await db.get<{ mime_type: string; filename: string }>(sql`
    SELECT d.mime_type, d.filename FROM documents d JOIN knowledge_bases k ON k.id = d.knowledge_base_id WHERE d.id = ${t.ref}`);
  if (doc && TABULAR.has(detectKind(doc.mime_type, doc.filename) ?? "")) await dropDocumentTables(env, t.knowledge_base_id, t.ref);
  return true;
}

/** A removed knowledge base: its tables and its whole vector index (its files and vectors are on the garbage list). */
async function cleanUpKnowledgeBase(env: Env, t: TaskRow): Promise<boolean> {
  await tablesStore(env, t.knowledge_base_id).drop();
  await vectorIndexFor(env).dropKnowledgeBase(t.knowledge_base_id);
  return true;
}

/** Works through the tasks (all, or those of one removed row); returns how many failed (they are retried). */
export async function runCleanupTasks(env: Env, db: Database, opts: { ref?: string } = {}): Promise<{ done: number; failed: number; more: boolean }> {
  const rows = await db.all<TaskRow>(
    opts.ref
      ? sql`SELECT id, kind, ref, knowledge_base_id FROM cleanup_tasks WHERE ref = ${opts.ref} ORDER BY id LIMIT ${TASKS_PER_PASS}`
      : sql`SELECT id, kind, ref, knowledge_base_id FROM cleanup_tasks ORDER BY attempts, id LIMIT ${TASKS_PER_PASS}`,
  );
  let done = 0;
  let failed = 0;
  let more = rows.length === TASKS_PER_PASS;
  for (const t of rows) {
    try {
      const finished = t.kind === "document" ? await cleanUpDocument(env, db, t) : await cleanUpKnowledgeBase(env, t);
      if (finished) {
        await db.run(sql`DELETE FROM cleanup_tasks WHERE id = ${t.id}`);
        done++;
      } else more = true;
    } catch (e) {
      failed++;
      console.warn(`cleanup of ${t.kind} ${t.ref} failed (retried later):`, e);
      await db.run(sql`UPDATE cleanup_tasks SET attempts = attempts + 1 WHERE id = ${t.id}`);
    }
  }
  return { done, failed, more };
}

/**
 * After DELETE /documents/:id: its chunks, vectors, tables and stored file go right after the response. If
 * this is cut short, the supervisor (woken by the delete) finishes from the recorded task.
 */
export function scheduleDocumentCleanup(env: Env, db: Database, documentId: string, knowledgeBaseId: string, waitUntil: (p: Promise<unknown>) => void) {
  waitUntil(
    (async () => {
      try {
        await runCleanupTasks(env, db, { ref: documentId });
        await drainGarbage(env, db, { knowledgeBaseId, maxRows: 5000 });
      } catch (e) {
        console.warn(`cleanup of document ${documentId} failed (the supervisor will finish it):`, e);
      }
    })(),
  );
}

// The supervisor drains what deletions left: tasks first (they add to the garbage list), then the garbage list.
registerRecovery("cleanup", 40, async ({ env, db, now }) => {
  const tasks = await runCleanupTasks(env, db);
  const drained = await drainGarbage(env, db, { maxRows: 2_000 });
  const left = await db.get<{ n: number }>(sql`
    SELECT (EXISTS (SELECT 1 FROM cleanup_tasks) OR EXISTS (SELECT 1 FROM ingest_garbage)) AS n`);
  if (!left?.n) return null;
  // Failures back off; progress continues at once.
  return tasks.failed ? now + 15_000 : tasks.more || tasks.done || drained ? now + 200 : now + 15_000;
});
