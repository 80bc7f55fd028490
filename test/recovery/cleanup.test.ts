import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runSupervisorNow } from "../../src/services/recovery/supervisor";
import { call, createKb, createOrg, expectStatus } from "../helpers";
import { chunkCount, tenantUsage, uploadFile, vectorCount, waitForDocument } from "../documents/doc-helpers";
import { newChat } from "../chats/chat-helpers";

/**
 * Cleanup that cannot be lost (README "Crash safety"): a deletion records what must be removed outside D1 in the
 * deleting statement itself, and the supervisor removes it; storage stays counted until the files are gone. The
 * crash is simulated by deleting with the statement alone, as if the process died right after it (no request
 * background work, no queued cleanup message).
 */
const MD = "text/markdown";
const CSV = "text/csv";
const ARTICLE = "# Okapi\n\nThe okapi is a giraffid native to the Congo rainforest.\n\n## Diet\n\nOkapis eat leaves, buds and fungi.";
const PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

async function setup() {
  const org = await createOrg();
  const kb = await createKb(org);
  const auth = { cookie: org.owner.cookie };
  const { id } = await uploadFile(auth, kb, { filename: "okapi.md", mime: MD, body: ARTICLE });
  const doc = await waitForDocument(auth, id);
  const { id: tableId } = await uploadFile(auth, kb, { filename: "sales.csv", mime: CSV, body: "region,amount\nnorth,10\nsouth,20\n" });
  const table = await waitForDocument(auth, tableId);
  return { org, kb, auth, doc, table };
}

const left = async (sql: string, ...binds: unknown[]) => (await env.DB.prepare(sql).bind(...binds).first<{ n: number }>())!.n;
const tablesOf = (kbId: string) => env.KB_TABLES.get(env.KB_TABLES.idFromName(kbId)).documentIds();

describe("a deletion cut short by a crash", () => {
  it("a knowledge base: its files, vectors and tables are removed by the supervisor; storage counts until then", async () => {
    const { org, kb, auth, doc, table } = await setup();
    const bytes = doc.size_bytes + table.size_bytes;
    expect(await vectorCount(kb.id)).toBeGreaterThan(0);
    expect(await tablesOf(kb.id)).toEqual([table.id]);
    // The deleting statement alone (the process died right after it).
    await env.DB.prepare("DELETE FROM knowledge_bases WHERE id = ?").bind(kb.id).run();
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 0, storage_used_bytes: bytes });
    expect(await env.BUCKET.head(doc.s3_key)).not.toBeNull();
    expect(await left("SELECT COUNT(*) AS n FROM cleanup_tasks WHERE ref = ?", kb.id)).toBe(1);

    await runSupervisorNow(env);
    expect(await env.BUCKET.head(doc.s3_key)).toBeNull();
    expect(await env.BUCKET.head(table.s3_key)).toBeNull();
    expect(await vectorCount(kb.id)).toBe(0);
    expect(await tablesOf(kb.id)).toEqual([]);
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 0, storage_used_bytes: 0 });
    expect(await left("SELECT COUNT(*) AS n FROM cleanup_tasks")).toBe(0);
    expect(await left("SELECT COUNT(*) AS n FROM ingest_garbage WHERE knowledge_base_id = ?", kb.id)).toBe(0);
  });

  it("a document: its chunks, vectors, tables and file are removed by the supervisor; storage counts until then", async () => {
    const { org, kb, auth, doc, table } = await setup();
    await env.DB.prepare("UPDATE documents SET status = 'deleted', deleted_at = ? WHERE id IN (?, ?)").bind(new Date().toISOString(), doc.id, table.id).run();
    // Out of the listing and the document count at once; the bytes count until the files are gone.
    expect(expectStatus(await call(`/documents?kb_id=${kb.id}`, auth), 200).documents).toEqual([]);
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 0, storage_used_bytes: doc.size_bytes + table.size_bytes });
    expect(await chunkCount(doc.id)).toBeGreaterThan(0);

    await runSupervisorNow(env);
    expect(await chunkCount(doc.id)).toBe(0);
    expect(await chunkCount(table.id)).toBe(0);
    expect(await vectorCount(kb.id)).toBe(0);
    expect(await tablesOf(kb.id)).toEqual([]);
    expect(await env.BUCKET.head(doc.s3_key)).toBeNull();
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 0, storage_used_bytes: 0 });
    expect(await left("SELECT COUNT(*) AS n FROM cleanup_tasks")).toBe(0);
  });

  it("a chat: its stored images are removed by the supervisor", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const r = await newChat(auth, kb, { images: [`data:image/png;base64,${PNG_1PX}`] });
    const key = (await env.DB.prepare("SELECT key FROM chat_files WHERE chat_id = ?").bind(r.chat.id).first<{ key: string }>())!.key;
    await env.DB.prepare("DELETE FROM chats WHERE id = ?").bind(r.chat.id).run();
    expect(await env.BUCKET.head(key)).not.toBeNull();
    await runSupervisorNow(env);
    expect(await env.BUCKET.head(key)).toBeNull();
  });

  it("DELETE arms the supervisor, so the cleanup happens even when nothing else runs", async () => {
    const { kb, auth, doc } = await setup();
    expect((await call(`/knowledge-bases/${kb.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const alarm = await (await import("cloudflare:test")).runInDurableObject(env.SUPERVISOR.get(env.SUPERVISOR.idFromName("supervisor")), (_, s) => s.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(Date.now() + 2_000);
    // Whoever gets there first (the request's background work or the supervisor), the file goes.
    for (let i = 0; i < 100 && (await env.BUCKET.head(doc.s3_key)); i++) await new Promise((r) => setTimeout(r, 50));
    expect(await env.BUCKET.head(doc.s3_key)).toBeNull();
  });
});
