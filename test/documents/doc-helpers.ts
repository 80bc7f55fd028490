import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { expect } from "vitest";
import worker from "../../src/index";
import { createDb } from "../../src/db/client";
import { call, expectStatus, fetchWorker, type Auth } from "../helpers";

export const db = () => createDb(env.DB);

export interface Uploaded {
  id: string;
  presign: any;
}

/** presign + PUT through the returned URL; returns the document id. */
export async function uploadFile(
  auth: Auth,
  kb: { id: string; tenant_id: string },
  file: { filename: string; mime: string; body: Uint8Array | string },
): Promise<Uploaded> {
  const bytes = typeof file.body === "string" ? new TextEncoder().encode(file.body) : file.body;
  const p = expectStatus(
    await call("/documents/presign", {
      ...auth,
      body: { kb_id: kb.id, tenant_id: kb.tenant_id, filename: file.filename, mime_type: file.mime, size_bytes: bytes.byteLength },
    }),
    201,
  );
  const put = await fetchWorker(p.upload_url, { method: "PUT", headers: p.headers, body: bytes });
  expect(put.status, await put.clone().text()).toBe(200);
  return { id: p.document_id, presign: p };
}

/** Polls GET /documents/status until the document leaves queued/processing (the real queue delivers). */
export async function waitForDocument(auth: Auth, id: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    last = expectStatus(await call(`/documents/status?document_id=${id}`, auth), 200);
    if (!last.is_processing && last.status !== "pending_upload") return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`document ${id} still ${last?.status} after ${timeoutMs} ms`);
}

/** Runs the Worker's queue consumer on hand-made messages and returns the ack/retry outcome. */
export async function runConsumer(bodies: unknown[], opts: { queue?: string; attempts?: number; env?: Record<string, unknown> } = {}) {
  const batch = createMessageBatch(
    opts.queue ?? "kb-ingest",
    bodies.map((body, i) => ({ id: `m${i}-${Math.random().toString(36).slice(2)}`, timestamp: new Date(), attempts: opts.attempts ?? 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...opts.env } as any, ctx);
  return getQueueResult(batch, ctx);
}

/** Vectors held by the local index for a knowledge base. */
export async function vectorCount(kbId: string): Promise<number> {
  const ns = env.LOCAL_VECTOR_INDEX;
  return (await ns.get(ns.idFromName(kbId)).stats()).count;
}

export async function chunkCount(documentId: string): Promise<number> {
  const r = await env.DB.prepare("SELECT COUNT(*) AS n FROM chunks WHERE document_id = ?").bind(documentId).first<{ n: number }>();
  return r?.n ?? 0;
}

export async function tenantUsage(auth: Auth, tenantId: string): Promise<{ document_count: number; storage_used_bytes: number }> {
  const t = expectStatus(await call(`/tenants/${tenantId}`, auth), 200);
  return { document_count: t.document_count, storage_used_bytes: t.storage_used_bytes };
}

/** Waits until `check` returns true (for background cleanup). */
export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

/**
 * A document stored in R2 and `queued`, WITHOUT a queue message: tests drive
 * the consumer themselves (runConsumer) so background deliveries cannot race.
 */
export async function seedDocument(
  kbId: string,
  file: { filename: string; mime: string; body: Uint8Array | string },
  status: "queued" | "pending_upload" = "queued",
) {
  const { getKnowledgeBase } = await import("../../src/services/knowledge-bases");
  const { insertDocument } = await import("../../src/services/documents/documents");
  const kb = (await getKnowledgeBase(db(), kbId))!;
  const bytes = typeof file.body === "string" ? new TextEncoder().encode(file.body) : file.body;
  const doc = await insertDocument(db(), { kb, filename: file.filename, mimeType: file.mime, sizeBytes: bytes.byteLength, status, createdBy: null });
  if (status === "queued") await env.BUCKET.put(doc.s3Key, bytes);
  return { doc, bytes, message: { type: "process", document_id: doc.id, seq: doc.ingestSeq } };
}

export async function docRow(id: string): Promise<any> {
  return env.DB.prepare("SELECT * FROM documents WHERE id = ?").bind(id).first();
}
