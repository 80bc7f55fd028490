import { sql } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import type { Env } from "../../env";
import { registerCleanup } from "../cleanup";
import { registerHousekeeping } from "../housekeeping";
import { enqueueGc, MAX_ATTEMPTS, sendProcessMessage } from "../ingest/messages";
import { checkAfter, leaseUntil } from "../recovery/leases";
import { registerRecovery } from "../recovery/supervisor";
import { vectorIndexFor } from "../vector-index";
import { documentLeaseLapsed } from "./documents";

/** Rows of the garbage list handled per round. */
const GC_BATCH = 500;
/** Pending uploads are dropped this long after their URL expired (releasing the reserved quota). */
const PENDING_UPLOAD_GRACE_MS = 60 * 60 * 1000;
/** Deleted document rows are kept this long (GET still answers `deleted`), then purged. */
const DELETED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

type GarbageRow = { id: number; kind: "object" | "vector"; knowledge_base_id: string; ref: string };

/**
 * Works through the garbage list (filled by triggers whenever documents or
 * chunks are removed): deletes stored files from R2 and vectors from the
 * vector index, then the list rows, releasing the storage the files counted
 * for. Safe to run concurrently and repeatedly: every deletion is idempotent,
 * and storage is released with the row that records it. A vector whose chunk
 * id exists again is kept.
 */
export async function drainGarbage(
  env: Env,
  db: Database,
  opts: { knowledgeBaseId?: string; maxRows?: number } = {},
): Promise<number> {
  const maxRows = opts.maxRows ?? 5000;
  const index = vectorIndexFor(env);
  let done = 0;
  while (done < maxRows) {
    const rows = (
      await db.all<GarbageRow>(
        opts.knowledgeBaseId
          ? sql`SELECT id, kind, knowledge_base_id, ref FROM ingest_garbage WHERE knowledge_base_id = ${opts.knowledgeBaseId} ORDER BY id LIMIT ${GC_BATCH}`
          : sql`SELECT id, kind, knowledge_base_id, ref FROM ingest_garbage ORDER BY id LIMIT ${GC_BATCH}`,
      )
    );
    if (!rows.length) break;

    const objects = rows.filter((r) => r.kind === "object").map((r) => r.ref);
    if (objects.length) await env.BUCKET.delete(objects);

    const vectorsByKb = new Map<string, string[]>();
    for (const r of rows) if (r.kind === "vector") vectorsByKb.set(r.knowledge_base_id, [...(vectorsByKb.get(r.knowledge_base_id) ?? []), r.ref]);
    const droppedKbs: string[] = [];
    for (const [kbId, ids] of vectorsByKb) {
      const kbExists = await db.get<{ n: number }>(sql`SELECT 1 AS n FROM knowledge_bases WHERE id = ${kbId}`);
      if (!kbExists && (await index.dropKnowledgeBase(kbId))) {
        droppedKbs.push(kbId);
        continue;
      }
      // Chunk ids are deterministic per generation: never delete the vector of a chunk that exists again.
      const alive = new Set(
        (await db.all<{ id: string }>(sql`SELECT id FROM chunks WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`)).map((r) => r.id),
      );
      const dead = ids.filter((id) => !alive.has(id));
      if (dead.length) await index.deleteByIds(kbId, dead);
    }
    const ids = JSON.stringify(rows.map((r) => r.id));
    const statements = [
      // The files are gone: the storage they counted for is released, in the same write that forgets them.
      sql`UPDATE tenants SET storage_used_bytes = storage_used_bytes - (
            SELECT COALESCE(SUM(g.bytes), 0) FROM ingest_garbage g WHERE g.tenant_id = tenants.id AND g.id IN (SELECT value FROM json_each(${ids})))
          WHERE id IN (SELECT g.tenant_id FROM ingest_garbage g WHERE g.bytes > 0 AND g.id IN (SELECT value FROM json_each(${ids})))`,
      sql`DELETE FROM ingest_garbage WHERE id IN (SELECT value FROM json_each(${ids}))`,
    ];
    // The whole index of a deleted knowledge base is gone: its other vector rows are done too.
    for (const kbId of droppedKbs) statements.push(sql`DELETE FROM ingest_garbage WHERE knowledge_base_id = ${kbId} AND kind = 'vector'`);
    await batchSql(db, statements);
    done += rows.length;
    if (rows.length < GC_BATCH) break;
  }
  return done;
}

/**
 * Removes the chunks of deleted documents and of generations no longer read
 * (a finished reprocess, a failed attempt), bounded per call. The chunk
 * triggers put their vectors on the garbage list. A generation being written
 * right now (the document's current ingest_seq while busy) is left alone.
 */
export async function purgeStaleChunks(db: Database, opts: { documentIds?: string[]; limit?: number } = {}): Promise<number> {
  const limit = opts.limit ?? 5000;
  const scope = opts.documentIds ? sql`AND d.id IN (SELECT value FROM json_each(${JSON.stringify(opts.documentIds)}))` : sql``;
  const res = await db.run(sql`
    DELETE FROM chunks WHERE seq IN (
      SELECT c.seq FROM chunks c JOIN documents d ON d.id = c.document_id
      WHERE (d.status = 'deleted'
         OR (c.generation <> d.index_generation AND NOT (d.status IN ('queued', 'processing') AND c.generation = d.ingest_seq)))
        ${scope}
      LIMIT ${limit})`);
  return res.meta.changes;
}

/** Documents whose lease lapsed, handled per pass (more: the next pass comes at once). */
const LAPSED_PER_PASS = 100;

/**
 * The documents whose lease lapsed (src/services/recovery): a queued one whose message was lost is sent again;
 * a processing one whose worker died is queued again, or failed once out of attempts. Each move is conditional on
 * the lease still being lapsed, so concurrent passes never re-send twice. Returns how many were handled.
 */
export async function requeueStuckDocuments(env: Env, db: Database, now = Date.now()): Promise<number> {
  const at = new Date(now).toISOString();
  const lapsed = documentLeaseLapsed(at);
  const stuck = await db.all<{ id: string; ingest_seq: number; attempts: number; status: "queued" | "processing" }>(sql`
    SELECT id, ingest_seq, attempts, status FROM documents
    WHERE status IN ('queued', 'processing') AND ${lapsed}
    LIMIT ${LAPSED_PER_PASS}`);
  for (const d of stuck) {
    const same = sql`id = ${d.id} AND ingest_seq = ${d.ingest_seq} AND status = ${d.status} AND ${lapsed}`;
    if (d.attempts >= MAX_ATTEMPTS) {
      await db.run(sql`
        UPDATE documents SET status = 'failed', updated_at = ${at}, lease_expires_at = NULL,
          error = 'Processing did not finish after 3 attempts (the processing worker stopped); reprocess to try again'
        WHERE ${same}`);
      continue;
    }
    const error =
      d.status === "processing"
        ? `Attempt ${d.attempts} of ${MAX_ATTEMPTS} was interrupted (the processing worker stopped); retrying`
        : null;
    const moved = await db.run(sql`
      UPDATE documents SET status = 'queued', lease_expires_at = ${leaseUntil(now)}, updated_at = ${at},
        error = COALESCE(${error}, error)
      WHERE ${same}`);
    if (moved.meta.changes) await sendProcessMessage(env, { id: d.id, ingestSeq: d.ingest_seq });
  }
  return stuck.length;
}

/** When the supervisor should look at documents again: just after the earliest lease of one in flight lapses. */
async function nextDocumentCheck(db: Database): Promise<number | null> {
  const next = await db.get<{ at: string | null }>(sql`
    SELECT MIN(COALESCE(lease_expires_at, strftime('%Y-%m-%dT%H:%M:%fZ', updated_at, '+30 seconds'))) AS at
    FROM documents WHERE status IN ('queued', 'processing')`);
  return next?.at ? checkAfter(next.at) : null;
}

/** Drops pending uploads whose URL expired long ago (their quota reservation is released by trigger). */
export async function expirePendingUploads(db: Database, now = Date.now()): Promise<number> {
  const before = new Date(now - PENDING_UPLOAD_GRACE_MS).toISOString();
  const res = await db.run(sql`DELETE FROM documents WHERE status = 'pending_upload' AND upload_expires_at < ${before}`);
  return res.meta.changes;
}

/** Deleted rows are kept for a week (so GET answers `deleted`), then purged once their chunks are gone. */
export async function purgeDeletedDocuments(db: Database, now = Date.now()): Promise<number> {
  const before = new Date(now - DELETED_RETENTION_MS).toISOString();
  const res = await db.run(sql`
    DELETE FROM documents WHERE id IN (
      SELECT d.id FROM documents d WHERE d.status = 'deleted' AND d.deleted_at < ${before}
        AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.document_id = d.id)
      LIMIT 500)`);
  return res.meta.changes;
}

registerRecovery("documents: leases", 30, async ({ env, db, now }) =>
  (await requeueStuckDocuments(env, db, now)) === LAPSED_PER_PASS ? now + 100 : nextDocumentCheck(db),
);
registerHousekeeping("documents: requeue stuck", (db, env, at) => requeueStuckDocuments(env, db, at.getTime()).then(() => undefined));
registerHousekeeping("documents: expire pending uploads", (db, _env, at) => expirePendingUploads(db, at.getTime()).then(() => undefined));
registerHousekeeping("documents: purge stale chunks and garbage", async (db, env, at) => {
  await purgeStaleChunks(db);
  await purgeDeletedDocuments(db, at.getTime());
  await drainGarbage(env, db);
});

// Deleting a knowledge base, tenant or organization removes the rows by cascade
// (the triggers record the stored files and vectors); the queued gc message
// then deletes those from R2 and the vector index. The delay lets the delete
// commit first; the cron housekeeping is the safety net.
for (const kind of ["knowledge_base", "tenant", "organization"] as const) {
  registerCleanup(kind, async ({ env, waitUntil }) => {
    waitUntil(enqueueGc(env, 1));
  });
}
