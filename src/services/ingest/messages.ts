import type { DocumentRow } from "../../db/schema";
import type { Env } from "../../env";
import { checkAfter, LEASE_MS } from "../recovery/leases";
import { wakeSupervisor } from "../recovery/supervisor";


/** Attempts per queued document before it is marked failed (API-DECISIONS.md). */
export const MAX_ATTEMPTS = 3;

/** Messages on the `kb-ingest` queue. */
export type ProcessMessage = { type: "process"; document_id: string; seq: number };
/** Drain the garbage list (stored files and vectors of removed rows). */
export type GcMessage = { type: "gc" };
/**
 * An R2 event notification (object-create on the documents bucket), sent when a
 * client uploads through an R2 presigned S3 URL.
 */
export type R2EventMessage = {
  account: string;
  bucket: string;
  object: { key: string; size?: number; eTag?: string };
  action: string;
  eventTime?: string;
};
export type IngestMessage = ProcessMessage | GcMessage | R2EventMessage;

export function isR2Event(body: unknown): body is R2EventMessage {
  const b = body as R2EventMessage | null;
  return !!b && typeof b === "object" && typeof b.action === "string" && typeof b.object?.key === "string";
}

/**
 * Queues processing of the document's current ingest sequence, and makes sure the supervisor looks at the
 * document's lease when it would lapse (a message lost with a restarting queue is sent again then). A failed
 * send is logged, not thrown: the document is already `queued`, and the supervisor re-sends when its lease
 * lapses (services/documents/cleanup.ts, requeueStuckDocuments).
 */
export async function enqueueProcessing(env: Env, doc: Pick<DocumentRow, "id" | "ingestSeq">, delaySeconds = 0): Promise<boolean> {
  await wakeSupervisor(env, checkAfter(Date.now() + delaySeconds * 1000 + LEASE_MS));
  return sendProcessMessage(env, doc, delaySeconds);
}

/** The send alone (the supervisor itself re-sends: it looks at the lease again on its own). */
export async function sendProcessMessage(env: Env, doc: Pick<DocumentRow, "id" | "ingestSeq">, delaySeconds = 0): Promise<boolean> {
  try {
    const msg: ProcessMessage = { type: "process", document_id: doc.id, seq: doc.ingestSeq };
    await env.INGEST_QUEUE.send(msg, delaySeconds ? { delaySeconds } : undefined);
    return true;
  } catch (e) {
    console.error(`could not queue document ${doc.id} for processing (the supervisor will retry):`, e);
    return false;
  }
}

export async function enqueueGc(env: Env, delaySeconds = 0): Promise<void> {
  try {
    const msg: GcMessage = { type: "gc" };
    await env.INGEST_QUEUE.send(msg, delaySeconds ? { delaySeconds } : undefined);
  } catch (e) {
    console.error("could not queue cleanup (housekeeping will do it):", e);
  }
}
