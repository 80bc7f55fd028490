import { and, eq, sql } from "drizzle-orm";
import { openDb, type Database } from "../../db/client";
import { documents } from "../../db/schema";
import type { Env } from "../../env";
import { nowIso } from "../../lib/time";
import { drainGarbage } from "../documents/cleanup";
import { getDocument, getDocumentByKey, markUploaded } from "../documents/documents";
import { registerQueueConsumer } from "../queues";
import { enqueueProcessing, isR2Event, type IngestMessage, type R2EventMessage } from "./messages";
import { processMessage, type ProcessOutcome } from "./process";

const R2_CREATE_ACTIONS = new Set(["PutObject", "CompleteMultipartUpload", "CopyObject"]);

/**
 * An upload through an R2 presigned URL finished: the bucket's notification
 * maps the key back to its document, which is then queued like a Worker
 * upload. Notifications for anything else (our own derived files, repeats)
 * are acknowledged and ignored.
 */
export async function handleR2Event(env: Env, db: Database, event: R2EventMessage): Promise<string> {
  if (!R2_CREATE_ACTIONS.has(event.action)) return `ignored action ${event.action}`;
  const doc = await getDocumentByKey(db, event.object.key);
  if (!doc) return "no document for this key";
  if (doc.status === "deleted") {
    // Uploaded after the document was deleted: nothing will ever read it.
    await env.BUCKET.delete(doc.s3Key);
    return "document deleted; object removed";
  }
  if (doc.status !== "pending_upload") return `document already ${doc.status}`;
  if (typeof event.object.size === "number" && event.object.size !== doc.sizeBytes) {
    await env.BUCKET.delete(doc.s3Key);
    const queued = await markUploaded(db, doc.id);
    if (queued) {
      await db
        .update(documents)
        .set({
          status: "failed",
          error: `The uploaded file was ${event.object.size} bytes but the presign declared ${doc.sizeBytes} bytes; it was discarded. Delete this document and upload the file again.`,
          updatedAt: nowIso(),
        })
        .where(and(eq(documents.id, doc.id), eq(documents.ingestSeq, queued.ingestSeq)));
    }
    return "size mismatch; document failed";
  }
  const queued = await markUploaded(db, doc.id);
  if (!queued) return "document no longer pending";
  await enqueueProcessing(env, queued);
  return "queued";
}

/** A message that exhausted the queue's own retries (the handler kept crashing): fail its document visibly. */
async function handleDeadLetter(db: Database, body: unknown): Promise<void> {
  const msg = body as IngestMessage;
  if (!msg || typeof msg !== "object" || !("type" in msg) || msg.type !== "process") return;
  const doc = await getDocument(db, msg.document_id);
  if (!doc || doc.ingestSeq !== msg.seq) return;
  await db.run(sql`
    UPDATE documents SET status = 'failed', updated_at = ${nowIso()},
      error = 'Processing could not complete (the processing worker failed repeatedly); reprocess to try again'
    WHERE id = ${doc.id} AND ingest_seq = ${msg.seq} AND status IN ('queued', 'processing')`);
}

function logOutcome(id: string, outcome: ProcessOutcome) {
  if (outcome.kind === "failed") console.warn(`document ${id} failed: ${outcome.error}`);
  else if (outcome.kind === "retry") console.warn(`document ${id} will be retried in ${outcome.delaySeconds} s: ${outcome.error}`);
}

/**
 * The `kb-ingest` consumer (and its dead-letter queue). Messages are handled
 * one at a time (parsing and embedding are CPU- and memory-heavy) and
 * acknowledged or retried individually, so one bad document never holds back
 * the others.
 */
export async function consumeIngest(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = openDb(env);
  const deadLetter = batch.queue.endsWith("-dlq");
  for (const message of batch.messages) {
    try {
      if (deadLetter) {
        await handleDeadLetter(db, message.body);
        message.ack();
        continue;
      }
      const body = message.body as IngestMessage;
      if (isR2Event(body)) {
        await handleR2Event(env, db, body);
        message.ack();
      } else if (body && typeof body === "object" && body.type === "process") {
        const outcome = await processMessage(env, db, body, { redelivered: message.attempts > 1 });
        logOutcome(body.document_id, outcome);
        if (outcome.kind === "retry") message.retry({ delaySeconds: outcome.delaySeconds });
        else message.ack();
      } else if (body && typeof body === "object" && body.type === "gc") {
        await drainGarbage(env, db);
        message.ack();
      } else {
        console.error("unrecognised ingest message; dropped:", JSON.stringify(message.body).slice(0, 500));
        message.ack();
      }
    } catch (e) {
      // Our own bookkeeping failed (for example D1 unavailable): let the queue redeliver.
      console.error(`ingest message ${message.id} failed; the queue will redeliver it:`, e);
      message.retry({ delaySeconds: Math.min(60 * message.attempts, 600) });
    }
  }
}

registerQueueConsumer("kb-ingest", (ctx, batch) => consumeIngest(batch, ctx.env));
