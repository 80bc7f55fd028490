import { sql } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import type { Env } from "../../env";
import { nowIso } from "../../lib/time";
import { registerCleanup } from "../cleanup";
import { registerHousekeeping } from "../housekeeping";
import { enqueueGc, enqueueProcessing } from "../ingest/messages";
import { dropDocumentTables } from "../tables/service";
import { vectorIndexFor } from "../vector-index";

/** Rows of the garbage list handled per round. */
const GC_BATCH = 500;
/** Pending uploads are dropped this long after their URL expired (releasing the reserved quota). */
const PENDING_UPLOAD_GRACE_MS = 60 * 60 * 1000;
/** Deleted document rows are kept this long (GET still answers `deleted`), then purged. */
const DELETED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** A queued document with no progress this long had its message lost: it is queued again. */
const QUEUED_STALE_MS = 15 * 60 * 1000;
/** A processing attempt silent this long died with its Worker: the document is queued again. */
const PROCESSING_STALE_MS = 30 * 60 * 1000;

type GarbageRow = { id: number; kind: "object" | "vector"; knowledge_base_id: string; ref: string };

/**
 * Works through the garbage list (filled by triggers whenever documents or
 * chunks are removed): deletes stored files from R2 and vectors from the
 * vector index, then the list rows. Safe to run concurrently and repeatedly:
 * every deletion is idempotent. A vector whose chunk id exists again is kept.
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
    const statements = [sql`DELETE FROM ingest_garbage WHERE id IN (SELECT value FROM json_each(${JSON.stringify(rows.map((r) => r.id))}))`];
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

/**
 * After DELETE /documents/:id: chunks, vectors and stored files go in the
 * background (the document is already out of search). A queued gc message and
 * the cron housekeeping finish the job if this is cut short.
 */
export function scheduleDocumentCleanup(env: Env, db: Database, documentId: string, waitUntil: (p: Promise<unknown>) => void) {
  waitUntil(
    (async () => {
      try {
        await purgeStaleChunks(db, { documentIds: [documentId] });
        const doc = await db.get<{ knowledge_base_id: string }>(sql`SELECT knowledge_base_id FROM documents WHERE id = ${documentId}`);
        // Its tables (if any); a failure here is caught up by reconciliation on the next table access.
        if (doc) await dropDocumentTables(env, doc.knowledge_base_id, documentId).catch((e) => console.warn(`dropping the tables of ${documentId} failed:`, e));
        await drainGarbage(env, db, { knowledgeBaseId: doc?.knowledge_base_id, maxRows: 5000 });
      } catch (e) {
        console.warn(`cleanup of document ${documentId} failed (it will be retried):`, e);
        await enqueueGc(env, 30);
      }
    })(),
  );
}

/** Re-queues documents whose processing message was lost or whose worker died; fails those out of attempts. */
export async function requeueStuckDocuments(env: Env, db: Database, now = Date.now()): Promise<number> {
  const queuedBefore = new Date(now - QUEUED_STALE_MS).toISOString();
  const processingBefore = new Date(now - PROCESSING_STALE_MS).toISOString();
  const stuck = await db.all<{ id: string; ingest_seq: number; attempts: number }>(sql`
    SELECT id, ingest_seq, attempts FROM documents
    WHERE (status = 'queued' AND updated_at < ${queuedBefore}) OR (status = 'processing' AND updated_at < ${processingBefore})
    LIMIT 100`);
  const at = nowIso();
  for (const d of stuck) {
    if (d.attempts >= 3) {
      await db.run(sql`
        UPDATE documents SET status = 'failed', updated_at = ${at},
          error = 'Processing did not finish after 3 attempts (the processing worker stopped); reprocess to try again'
        WHERE id = ${d.id} AND ingest_seq = ${d.ingest_seq} AND status IN ('queued', 'processing')`);
      continue;
    }
    // Touch updated_at so the next round waits again before re-sending.
    await db.run(sql`UPDATE documents SET updated_at = ${at} WHERE id = ${d.id} AND ingest_seq = ${d.ingest_seq}`);
    await enqueueProcessing(env, { id: d.id, ingestSeq: d.ingest_seq });
  }
  return stuck.length;
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
