import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expirePendingUploads, requeueStuckDocuments } from "../../src/services/documents/cleanup";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { call, createKb, createOrg, expectError, expectStatus, testServer, unique } from "../helpers";
import { chunkCount, db, docRow, eventually, runConsumer, seedDocument, tenantUsage, vectorCount, waitForDocument } from "./doc-helpers";

const MD = "text/markdown";
const text = (n: number) =>
  Array.from({ length: n }, (_, i) => `## Section ${i}\n\nParagraph number ${i} talks about topic${i} and nothing else.`).join("\n\n");

async function setup() {
  const org = await createOrg();
  const kb = await createKb(org);
  return { org, kb, auth: { cookie: org.owner.cookie } };
}

const openai = (model: string) => ({
  EMBEDDING_PROVIDER: "openai",
  EMBEDDING_BASE_URL: `${testServer("openai")}/v1`,
  EMBEDDING_MODEL: model,
});

async function serverStats(model: string) {
  return (await (await fetch(`${testServer("openai")}/stats?model=${model}`)).json()) as { requests: number; inputs: number; rejected: number };
}

describe("queue consumer: idempotency", () => {
  it("processes a message once; a redelivered message changes nothing", async () => {
    const { kb } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(3) });
    const first = await runConsumer([message]);
    expect(first.explicitAcks).toHaveLength(1);
    expect(first.retryMessages).toEqual([]);
    const row = await docRow(doc.id);
    expect(row).toMatchObject({ status: "processed", chunk_count: 3, index_generation: 1, attempts: 1, error: null });
    expect(await chunkCount(doc.id)).toBe(3);
    expect(await vectorCount(kb.id)).toBe(3);

    const again = await runConsumer([message, message]);
    expect(again.explicitAcks).toHaveLength(2);
    expect(await chunkCount(doc.id)).toBe(3);
    expect(await vectorCount(kb.id)).toBe(3);
    expect((await docRow(doc.id)).attempts).toBe(1);
  });

  it("concurrent deliveries of the same message never duplicate chunks", async () => {
    const { kb } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(5) });
    await Promise.all([runConsumer([message]), runConsumer([message]), runConsumer([message])]);
    expect((await docRow(doc.id)).status).toBe("processed");
    expect(await chunkCount(doc.id)).toBe(5);
    expect(await vectorCount(kb.id)).toBe(5);
    const hits = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "topic3", limit: 50 });
    expect(new Set(hits.map((h) => h.chunk_id)).size).toBe(hits.length);
  });

  it("ignores stale messages (an older ingest sequence) and messages for unknown documents", async () => {
    const { kb } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(1) });
    await env.DB.prepare("UPDATE documents SET ingest_seq = 2 WHERE id = ?").bind(doc.id).run();
    const r = await runConsumer([message, { type: "process", document_id: "doc_nope", seq: 1 }, { type: "nonsense" }, "junk"]);
    expect(r.explicitAcks).toHaveLength(4);
    expect((await docRow(doc.id)).status).toBe("queued");
    expect(await chunkCount(doc.id)).toBe(0);
  });

  it("search never sees a generation that has not been switched on", async () => {
    const { kb } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: "# Otters\n\nSea otters hold hands while sleeping." });
    await runConsumer([message]);
    // A half-written next generation (as during a reprocess) is invisible.
    await env.DB.prepare(
      "INSERT INTO chunks (id, document_id, knowledge_base_id, tenant_id, generation, ordinal, title, heading, body, token_count, created_at) VALUES (?, ?, ?, ?, 2, 0, 'a.md', '', 'Sea otters juggle pebbles.', 5, ?)",
    )
      .bind(`${doc.id}:2:0`, doc.id, kb.id, doc.tenantId, new Date().toISOString())
      .run();
    const hits = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "otters pebbles juggle" });
    expect(hits.map((h) => h.chunk_id)).toEqual([`${doc.id}:1:0`]);
  });
});

describe("queue consumer: failures", () => {
  it("an unparseable file fails at once with a readable error; it stays visible, deletable and reprocessable", async () => {
    const { kb, auth } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "broken.pdf", mime: "application/pdf", body: "this is not a PDF at all" });
    const r = await runConsumer([message]);
    expect(r.explicitAcks).toHaveLength(1);
    expect(r.retryMessages).toEqual([]);
    const failed = expectStatus(await call(`/documents/${doc.id}`, auth), 200);
    expect(failed).toMatchObject({ status: "failed", is_processing: false, chunk_count: 0 });
    expect(failed.error).toMatch(/not a readable PDF/);
    expect(expectStatus(await call(`/documents?kb_id=${kb.id}`, auth), 200).documents.map((d: any) => d.id)).toEqual([doc.id]);

    const again = expectStatus(await call(`/documents/${doc.id}/reprocess`, { ...auth, method: "POST" }), 202);
    expect(again).toMatchObject({ status: "queued", error: null });
    const after = await waitForDocument(auth, doc.id);
    expect(after.status).toBe("failed");
    expect((await call(`/documents/${doc.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
  });

  it("retries a transient failure with backoff, then fails after 3 attempts with the reason", async () => {
    const { kb, auth } = await setup();
    const model = unique("fail-");
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(2) });
    // Backoff: 10 s, then 40 s (the test harness does not report delaySeconds; the document's error does).
    for (const [attempt, delay] of [[1, 10], [2, 40]]) {
      const r = await runConsumer([message], { env: openai(model), attempts: attempt });
      expect(r.retryMessages).toHaveLength(1);
      const row = await docRow(doc.id);
      expect(row).toMatchObject({ status: "queued", attempts: attempt });
      expect(row.error).toMatch(new RegExp(`^Attempt ${attempt} of 3 failed \\(.*upstream exploded.*\\); retrying in ${delay} s$`));
    }
    const last = await runConsumer([message], { env: openai(model), attempts: 3 });
    expect(last.explicitAcks).toHaveLength(1);
    const failed = expectStatus(await call(`/documents/${doc.id}`, auth), 200);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/^Processing failed after 3 attempts: /);
    expect(await chunkCount(doc.id)).toBe(0);
    // Fixable: once the provider works again, reprocessing succeeds.
    expectStatus(await call(`/documents/${doc.id}/reprocess`, { ...auth, method: "POST" }), 202);
    expect((await waitForDocument(auth, doc.id)).status).toBe("processed");
  });

  it("a provider refusing the credentials fails the document at once", async () => {
    const { kb } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(1) });
    const r = await runConsumer([message], { env: openai(unique("unauthorized-")) });
    expect(r.retryMessages).toEqual([]);
    const row = await docRow(doc.id);
    expect(row.status).toBe("failed");
    expect(row.error).toMatch(/refused the request \(401\)/);
  });

  it("honours a short Retry-After in place and resends only the rate-limited batch", async () => {
    const { kb } = await setup();
    const model = unique("ratelimit-once-");
    const { doc, message } = await seedDocument(kb.id, { filename: "big.md", mime: MD, body: text(100) });
    const r = await runConsumer([message], { env: openai(model) });
    expect(r.retryMessages).toEqual([]);
    expect((await docRow(doc.id)).status).toBe("processed");
    // Two batches (64 + 36); the first was refused once and sent again.
    expect(await serverStats(model)).toEqual({ requests: 3, inputs: 100, rejected: 1 });
    const kbRow = await env.DB.prepare("SELECT embedding_model, embedding_dimensions FROM knowledge_bases WHERE id = ?").bind(kb.id).first();
    expect(kbRow).toEqual({ embedding_model: model, embedding_dimensions: 64 });
  });

  it("a long Retry-After retries the message later; the next attempt embeds only what is missing", async () => {
    const { kb } = await setup();
    const model = unique("ratelimit-second-");
    const { doc, message } = await seedDocument(kb.id, { filename: "big.md", mime: MD, body: text(100) });
    const first = await runConsumer([message], { env: openai(model) });
    expect(first.retryMessages).toHaveLength(1);
    expect((await docRow(doc.id)).error).toMatch(/rate limiting.*retrying in 120 s/);
    const second = await runConsumer([message], { env: openai(model), attempts: 2 });
    expect(second.explicitAcks).toHaveLength(1);
    expect(await docRow(doc.id)).toMatchObject({ status: "processed", chunk_count: 100 });
    expect(await serverStats(model)).toEqual({ requests: 3, inputs: 100, rejected: 1 });
    expect(await vectorCount(kb.id)).toBe(100);
  });

  it("paid embeddings are metered: indexing and query embedding each leave an `embedding` usage record", async () => {
    const { org, kb } = await setup();
    const model = unique("metered-");
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(3) });
    await runConsumer([message], { env: openai(model) });
    expect((await docRow(doc.id)).status).toBe("processed");
    const logs = () =>
      env.DB.prepare("SELECT operation, model, input_tokens, output_tokens, credits_used, user_id FROM usage_logs WHERE tenant_id = ? ORDER BY created_at, rowid")
        .bind(org.tenantId)
        .all()
        .then((r) => r.results);
    // The test server reports one prompt token per input: 3 chunks, 0.02 credits per 1,000 tokens.
    expect(await logs()).toEqual([{ operation: "embedding", model, input_tokens: 3, output_tokens: 0, credits_used: 60, user_id: null }]);

    const hits = await searchKnowledgeBase({ ...env, ...openai(model) } as any, db(), {
      knowledgeBaseId: kb.id,
      query: "topic1",
      actor: { userId: org.owner.id },
    });
    expect(hits[0].text).toMatch(/topic1/);
    const after = await logs();
    expect(after).toHaveLength(2);
    expect(after[1]).toEqual({ operation: "embedding", model, input_tokens: 1, output_tokens: 0, credits_used: 20, user_id: org.owner.id });
    const t = await env.DB.prepare("SELECT credits_used FROM tenants WHERE id = ?").bind(org.tenantId).first<{ credits_used: number }>();
    expect(t!.credits_used).toBe(80);

    // The offline hash embedder is free: searching with it records nothing.
    await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "topic2", vector: false });
    expect(await logs()).toHaveLength(2);
  });

  it("refuses to mix embedding models in one knowledge base (document failed; search 409)", async () => {
    const { kb, auth } = await setup();
    const a = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(1) });
    await runConsumer([a.message]);
    const b = await seedDocument(kb.id, { filename: "b.md", mime: MD, body: text(1) });
    await runConsumer([b.message], { env: { EMBEDDING_DIMENSIONS: "256" } });
    const failed = expectStatus(await call(`/documents/${b.doc.id}`, auth), 200);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/hash-v1-512.*hash-v1-256.*cannot be mixed/);
    await expect(
      searchKnowledgeBase({ ...env, EMBEDDING_DIMENSIONS: "256" }, db(), { knowledgeBaseId: kb.id, query: "topic0" }),
    ).rejects.toMatchObject({ code: "embedding_mismatch", status: 409 });
  });

  it("a document whose attempts keep dying mid-way is failed instead of tried forever", async () => {
    const { kb } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(1) });
    // Three attempts started and none reported back (the Worker was stopped each time).
    await env.DB.prepare("UPDATE documents SET status = 'processing', attempts = 3 WHERE id = ?").bind(doc.id).run();
    const r = await runConsumer([message], { attempts: 4 });
    expect(r.explicitAcks).toHaveLength(1);
    const row = await docRow(doc.id);
    expect(row.status).toBe("failed");
    expect(row.error).toMatch(/stopped before finishing/);
  });

  it("a message that exhausted the queue's retries (dead-letter queue) fails its document", async () => {
    const { kb } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(1) });
    const r = await runConsumer([message], { queue: "kb-ingest-dlq" });
    expect(r.explicitAcks).toHaveLength(1);
    const row = await docRow(doc.id);
    expect(row.status).toBe("failed");
    expect(row.error).toMatch(/reprocess to try again/);
  });
});

describe("queue consumer: deletion during processing", () => {
  it("a document deleted while it is being processed leaves no chunks or vectors behind", async () => {
    const { kb, auth } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(3) });
    const running = runConsumer([message], { env: openai(unique("slow-")) });
    await eventually(async () => (await chunkCount(doc.id)) > 0, "chunks written");
    expect((await call(`/documents/${doc.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const r = await running;
    expect(r.explicitAcks).toHaveLength(1);
    expect((await docRow(doc.id)).status).toBe("deleted");
    await eventually(async () => (await chunkCount(doc.id)) === 0, "chunks removed");
    await eventually(async () => (await vectorCount(kb.id)) === 0, "vectors removed");
    expect(await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "topic1", vector: false })).toEqual([]);
  });
});

describe("R2 event notifications (uploads through R2 presigned URLs)", () => {
  const event = (key: string, size: number, action = "PutObject") => ({
    account: "acct",
    bucket: "kb-documents",
    object: { key, size, eTag: "abc" },
    action,
    eventTime: new Date().toISOString(),
  });

  it("an object-created message maps the key to its document and starts processing", async () => {
    const { kb, auth } = await setup();
    const body = "# Lemurs\n\nRing-tailed lemurs sunbathe in the morning.";
    const { doc } = await seedDocument(kb.id, { filename: "l.md", mime: MD, body }, "pending_upload");
    await env.BUCKET.put(doc.s3Key, body);
    const r = await runConsumer([event(doc.s3Key, new TextEncoder().encode(body).byteLength)]);
    expect(r.explicitAcks).toHaveLength(1);
    expect((await docRow(doc.id)).status).toMatch(/queued|processing|processed/);
    const done = await waitForDocument(auth, doc.id);
    expect(done.status).toBe("processed");
    // Repeats and our own files are ignored.
    const again = await runConsumer([event(doc.s3Key, 10), event("o/other/key.md", 1), event(doc.s3Key, 1, "DeleteObject")]);
    expect(again.explicitAcks).toHaveLength(3);
    expect((await docRow(doc.id)).status).toBe("processed");
  });

  it("a size different from the presign fails the document and discards the object", async () => {
    const { kb } = await setup();
    const { doc } = await seedDocument(kb.id, { filename: "l.md", mime: MD, body: "12345" }, "pending_upload");
    await env.BUCKET.put(doc.s3Key, "123456789");
    await runConsumer([event(doc.s3Key, 9)]);
    const row = await docRow(doc.id);
    expect(row.status).toBe("failed");
    expect(row.error).toMatch(/9 bytes but the presign declared 5 bytes/);
    expect(await env.BUCKET.get(doc.s3Key)).toBeNull();
  });

  it("an upload that lands after the document was deleted is removed", async () => {
    const { kb, auth } = await setup();
    const { doc } = await seedDocument(kb.id, { filename: "l.md", mime: MD, body: "12345" }, "pending_upload");
    expect((await call(`/documents/${doc.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    await env.BUCKET.put(doc.s3Key, "12345");
    await runConsumer([event(doc.s3Key, 5)]);
    expect(await env.BUCKET.get(doc.s3Key)).toBeNull();
    expect((await docRow(doc.id)).status).toBe("deleted");
  });
});

describe("housekeeping", () => {
  it("re-queues documents whose message was lost, and fails those out of attempts", async () => {
    const { kb, auth } = await setup();
    const lost = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(1) });
    const dead = await seedDocument(kb.id, { filename: "b.md", mime: MD, body: text(1) });
    // Their leases lapsed long ago (the message, and the worker, are gone).
    const old = new Date(Date.now() - 40 * 60 * 1000).toISOString();
    await env.DB.prepare("UPDATE documents SET updated_at = ?, lease_expires_at = ? WHERE id IN (?, ?)").bind(old, old, lost.doc.id, dead.doc.id).run();
    await env.DB.prepare("UPDATE documents SET status = 'processing', attempts = 3 WHERE id = ?").bind(dead.doc.id).run();
    expect(await requeueStuckDocuments(env, db())).toBe(2);
    expect((await waitForDocument(auth, lost.doc.id)).status).toBe("processed");
    const d = await docRow(dead.doc.id);
    expect(d.status).toBe("failed");
    expect(d.error).toMatch(/did not finish/);
  });

  it("drops pending uploads long past their URL's expiry and releases the reserved quota", async () => {
    const { org, kb, auth } = await setup();
    const p = expectStatus(
      await call("/documents/presign", { ...auth, body: { kb_id: kb.id, tenant_id: org.tenantId, filename: "a.md", mime_type: MD, size_bytes: 500 } }),
      201,
    );
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 1, storage_used_bytes: 500 });
    expect(await expirePendingUploads(db(), Date.now())).toBe(0);
    expect(await expirePendingUploads(db(), Date.now() + 2 * 60 * 60 * 1000)).toBeGreaterThanOrEqual(1);
    expectError(await call(`/documents/${p.document_id}`, auth), 404);
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 0, storage_used_bytes: 0 });
  });

  it("cleans up chunks of deleted documents even when the request's background work was lost", async () => {
    const { kb } = await setup();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: MD, body: text(2) });
    await runConsumer([message]);
    // Deleted by a statement only (no background cleanup ran).
    await env.DB.prepare("UPDATE documents SET status = 'deleted' WHERE id = ?").bind(doc.id).run();
    const { runHousekeeping } = await import("../../src/services/housekeeping");
    await runHousekeeping(db(), env, new Date());
    expect(await chunkCount(doc.id)).toBe(0);
    await eventually(async () => (await vectorCount(kb.id)) === 0, "vectors removed");
    expect(await env.BUCKET.get(doc.s3Key)).toBeNull();
  });
});
