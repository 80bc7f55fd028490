import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runSupervisorNow } from "../../src/services/recovery/supervisor";
import { call, createKb, createOrg, expectError, expectStatus, fetchWorker } from "../helpers";
import { chunkCount, docRow, runConsumer, seedDocument, tenantUsage, uploadFile, waitForDocument } from "../documents/doc-helpers";

/**
 * Documents after a crash (README "Crash safety"): a document in flight holds a lease of seconds; once it lapses
 * the supervisor re-drives it and reprocess works at once. Crashes are simulated by dropping the queue batch (the
 * message is never delivered, or delivered and never finished) and by rewinding the lease in the database.
 */
const MD = "text/markdown";
const text = (n: number) => Array.from({ length: n }, (_, i) => `## Part ${i}\n\nThe okapi is a giraffid of the Congo rainforest, fact ${i}.`).join("\n\n");

async function setup() {
  const org = await createOrg();
  const kb = await createKb(org);
  return { org, kb, auth: { cookie: org.owner.cookie } };
}

const past = (ms = 1000) => new Date(Date.now() - ms).toISOString();
const lapse = (id: string) => env.DB.prepare("UPDATE documents SET lease_expires_at = ? WHERE id = ?").bind(past(), id).run();
const supervisorStub = () => env.SUPERVISOR.get(env.SUPERVISOR.idFromName("supervisor"));

describe("a document whose worker is gone", () => {
  it("a queued document whose message was lost is sent again when its lease lapses, and processed once", async () => {
    const { kb, auth } = await setup();
    // Queued, its message dropped (the queue lost it in a restart).
    const { doc } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(3) });
    await runSupervisorNow(env);
    expect((await docRow(doc.id)).status).toBe("queued"); // the lease holds: the message may still come
    await lapse(doc.id);
    await runSupervisorNow(env);
    const done = await waitForDocument(auth, doc.id);
    expect(done).toMatchObject({ status: "processed", chunk_count: 3 });
    expect(await chunkCount(doc.id)).toBe(3);
  });

  it("a processing document whose worker died is queued again, then processed once; reprocess works at once", async () => {
    const { kb, auth } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(3) });
    // The worker claimed it (attempt 1) and died: the batch was dropped mid-way.
    await env.DB.prepare("UPDATE documents SET status = 'processing', attempts = 1, lease_expires_at = ? WHERE id = ?")
      .bind(new Date(Date.now() + 30_000).toISOString(), doc.id)
      .run();
    // While the lease holds, it is busy: reprocess is refused and a duplicate delivery leaves it alone.
    expectError(await call(`/documents/${doc.id}/reprocess`, { ...auth, method: "POST" }), 409, "document_busy");
    expect((await runConsumer([message])).explicitAcks).toHaveLength(1);
    expect((await docRow(doc.id)).status).toBe("processing");

    // The lease lapses (30 s without a heartbeat): reprocess works at once (not after 30 minutes).
    await lapse(doc.id);
    const r = expectStatus(await call(`/documents/${doc.id}/reprocess`, { ...auth, method: "POST" }), 202);
    expect(r).toMatchObject({ status: "queued", is_processing: true });
    expect(await waitForDocument(auth, doc.id)).toMatchObject({ status: "processed", chunk_count: 3 });
  });

  it("the supervisor re-queues a processing document whose lease lapsed, and fails one out of attempts with the reason", async () => {
    const { kb, auth } = await setup();
    const a = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(2) });
    const b = await seedDocument(kb.id, { filename: "b.md", mime: MD, body: text(2) });
    await env.DB.prepare("UPDATE documents SET status = 'processing', attempts = 1, lease_expires_at = ? WHERE id = ?").bind(past(), a.doc.id).run();
    await env.DB.prepare("UPDATE documents SET status = 'processing', attempts = 3, lease_expires_at = ? WHERE id = ?").bind(past(), b.doc.id).run();
    await runSupervisorNow(env);
    expect(await waitForDocument(auth, a.doc.id)).toMatchObject({ status: "processed", chunk_count: 2 });
    const failed = await docRow(b.doc.id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/did not finish after 3 attempts/);
  });

  it("starting leased work arms the supervisor's alarm for when the lease would lapse; a finished document holds none", async () => {
    const { kb, auth } = await setup();
    const { id } = await uploadFile(auth, kb, { filename: "a.md", mime: MD, body: text(2) });
    await waitForDocument(auth, id);
    const alarm = await runInDurableObject(supervisorStub(), (_, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThan(Date.now());
    expect(alarm).toBeLessThan(Date.now() + 35_000);
    expect((await docRow(id)).lease_expires_at).toBeNull(); // processed: no lease any more
  });
});

describe("uploads cut mid-PUT", () => {
  it("can be retried as soon as the dead upload's reservation lapses (seconds, not 10 minutes)", async () => {
    const { org, kb, auth } = await setup();
    const body = new TextEncoder().encode(text(1));
    const p = expectStatus(
      await call("/documents/presign", { ...auth, body: { kb_id: kb.id, tenant_id: org.tenantId, filename: "a.md", mime_type: MD, size_bytes: body.byteLength } }),
      201,
    );
    // An upload was streaming when the service died: its reservation is still recorded.
    await env.DB.prepare("UPDATE documents SET upload_claimed_at = ? WHERE id = ?").bind(past(2_000), p.document_id).run();
    const busy = await fetchWorker(p.upload_url, { method: "PUT", headers: p.headers, body });
    expect(busy.status).toBe(409);
    const wait = Number(busy.headers.get("Retry-After"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(15);
    // 15 s later (rewound here) the retry goes through.
    await env.DB.prepare("UPDATE documents SET upload_claimed_at = ? WHERE id = ?").bind(past(16_000), p.document_id).run();
    const ok = await fetchWorker(p.upload_url, { method: "PUT", headers: p.headers, body });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await waitForDocument(auth, p.document_id)).toMatchObject({ status: "processed" });
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 1, storage_used_bytes: body.byteLength });
  });

  it("a PUT whose body breaks off frees the document at once", async () => {
    const { org, kb, auth } = await setup();
    const body = new TextEncoder().encode(text(1));
    const p = expectStatus(
      await call("/documents/presign", { ...auth, body: { kb_id: kb.id, tenant_id: org.tenantId, filename: "a.md", mime_type: MD, size_bytes: body.byteLength } }),
      201,
    );
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(body.slice(0, 10));
        controller.error(new Error("connection reset"));
      },
    });
    const cut = await fetchWorker(p.upload_url, { method: "PUT", headers: { ...p.headers, "Content-Length": String(body.byteLength) }, body: broken, duplex: "half" } as RequestInit);
    expect(cut.status).toBeGreaterThanOrEqual(400);
    const ok = await fetchWorker(p.upload_url, { method: "PUT", headers: p.headers, body });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await waitForDocument(auth, p.document_id)).toMatchObject({ status: "processed" });
  });
});
