import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { embedderFor, EmbeddingConfigError } from "../../src/services/embeddings";
import { hashEmbed, hashEmbedder } from "../../src/services/embeddings/hash";
import { retryAfterSeconds } from "../../src/services/embeddings/openai";
import { WORKERS_AI_BATCH_SIZE, workersAiEmbedder } from "../../src/services/embeddings/workers-ai";
import { ftsQuery, searchKnowledgeBase } from "../../src/services/retrieval/search";
import { LocalVectorIndex, localVectorIndex } from "../../src/services/vector-index/local";
import { vectorizeIndex } from "../../src/services/vector-index/vectorize";
import { vectorIndexFor } from "../../src/services/vector-index";
import { createKb, createOrg, testServer, unique } from "../helpers";
import { db, runConsumer, seedDocument } from "./doc-helpers";

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0);

describe("hash embedder (hash-v1)", () => {
  it("is deterministic, normalized, and ranks lexical overlap", async () => {
    const e = hashEmbedder(512);
    expect(e).toMatchObject({ provider: "hash", model: "hash-v1-512", dimensions: 512 });
    const [a, a2, b, c] = await e.embed(
      ["The glacier moved slowly down the valley", "The glacier moved slowly down the valley", "Glaciers move slowly through valleys", "Quarterly revenue grew in the third quarter"],
      "document",
    );
    expect(a).toEqual(a2);
    expect(a).toHaveLength(512);
    expect(Math.abs(cosine(a, a) - 1)).toBeLessThan(1e-9);
    // Shared stems score higher than unrelated text (character n-grams give partial credit).
    expect(cosine(a, b)).toBeGreaterThan(cosine(a, c) + 0.2);
    expect(hashEmbed("", 8).every((x) => x === 0)).toBe(true);
  });

  it("EMBEDDING_DIMENSIONS changes the model id; unknown providers are refused", () => {
    expect(embedderFor({ ...env, EMBEDDING_DIMENSIONS: "256" }).model).toBe("hash-v1-256");
    expect(embedderFor({ ...env, EMBEDDING_PROVIDER: "openai", EMBEDDING_MODEL: "m" })).toMatchObject({ provider: "openai", model: "m" });
    expect(() => embedderFor({ ...env, EMBEDDING_PROVIDER: "nope" })).toThrow(EmbeddingConfigError);
    expect(() => embedderFor({ ...env, EMBEDDING_PROVIDER: "workers-ai" })).toThrow(/AI binding/);
  });
});

describe("openai embedder", () => {
  it("embeds through an OpenAI-compatible server and learns the dimension", async () => {
    const model = unique("plain-");
    const e = embedderFor({ ...env, EMBEDDING_PROVIDER: "openai", EMBEDDING_BASE_URL: `${testServer("openai")}/v1/`, EMBEDDING_MODEL: model });
    const vectors = await e.embed(["alpha beta", "gamma"], "document");
    expect(vectors).toHaveLength(2);
    expect(vectors[0]).toHaveLength(64);
    expect(e.dimensions).toBe(64);
  });

  it("reads Retry-After in seconds, as a date, and retry-after-ms", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterSeconds({ "retry-after": "7" }, now)).toBe(7);
    expect(retryAfterSeconds({ "Retry-After": "Thu, 01 Jan 2026 00:00:30 GMT" }, now)).toBe(30);
    expect(retryAfterSeconds({ "retry-after-ms": "1500" }, now)).toBe(1.5);
    expect(retryAfterSeconds({}, now)).toBeNull();
    expect(retryAfterSeconds({ "retry-after": "soon" }, now)).toBeNull();
  });
});

/** A test double of the Workers AI binding honouring the documented BGE contract. */
function fakeAi() {
  const calls: number[] = [];
  const ai = {
    async run(model: string, input: { text: string | string[] }) {
      if (!model.startsWith("@cf/baai/bge-")) throw new Error(`unknown model ${model}`);
      const texts = Array.isArray(input.text) ? input.text : [input.text];
      if (texts.length > WORKERS_AI_BATCH_SIZE) throw new Error("too many inputs");
      calls.push(texts.length);
      const dims = model.includes("small") ? 384 : 768;
      return { shape: [texts.length, dims], data: texts.map((t) => Array.from({ length: dims }, (_, i) => ((t.length + i) % 7) - 3)) };
    },
  };
  return { ai: ai as unknown as Ai, calls };
}

describe("workers-ai embedder (binding test double)", () => {
  it("batches by the model's limit and returns the documented dimension", async () => {
    const { ai, calls } = fakeAi();
    const e = workersAiEmbedder(ai, "@cf/baai/bge-small-en-v1.5");
    expect(e.dimensions).toBe(384);
    const out = await e.embed(Array.from({ length: 250 }, (_, i) => `text ${i}`), "document");
    expect(out).toHaveLength(250);
    expect(out[0]).toHaveLength(384);
    expect(calls).toEqual([100, 100, 50]);
  });

  it("indexes a whole document through the pipeline with EMBEDDING_PROVIDER=workers-ai", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const { ai } = fakeAi();
    const { doc, message } = await seedDocument(kb.id, { filename: "a.md", mime: "text/markdown", body: "# A\n\nalpha\n\n# B\n\nbeta" });
    await runConsumer([message], { env: { EMBEDDING_PROVIDER: "workers-ai", AI: ai } });
    const row = await env.DB.prepare("SELECT d.status, k.embedding_model, k.embedding_dimensions FROM documents d JOIN knowledge_bases k ON k.id = d.knowledge_base_id WHERE d.id = ?")
      .bind(doc.id)
      .first();
    expect(row).toEqual({ status: "processed", embedding_model: "@cf/baai/bge-small-en-v1.5", embedding_dimensions: 384 });
  });
});

/**
 * A test double of the Vectorize binding honouring its documented limits:
 * upsert at most 1,000 vectors per call, topK at most 100 without metadata or
 * values and at most 20 with them, namespaces isolate queries.
 */
function fakeVectorize() {
  const store = new Map<string, { values: number[]; namespace?: string; metadata?: Record<string, unknown> }>();
  const calls = { upsert: [] as number[], deleteByIds: [] as number[] };
  const binding = {
    async upsert(vectors: VectorizeVector[]) {
      if (vectors.length > 1000) throw new Error("VECTOR_UPSERT_ERROR: batch larger than 1000");
      calls.upsert.push(vectors.length);
      for (const v of vectors) store.set(v.id, { values: Array.from(v.values), namespace: v.namespace, metadata: v.metadata });
      return { mutationId: "m" };
    },
    async query(vector: number[], opts: VectorizeQueryOptions) {
      const topK = opts.topK ?? 5;
      const heavy = opts.returnValues || opts.returnMetadata === true || opts.returnMetadata === "all";
      if (topK > (heavy ? 20 : 100)) throw new Error(`VECTOR_QUERY_ERROR: topK ${topK} exceeds the limit`);
      const matches = [...store.entries()]
        .filter(([, v]) => v.namespace === opts.namespace)
        .map(([id, v]) => ({ id, score: cosine(v.values, vector) / (Math.hypot(...v.values) * Math.hypot(...vector) || 1) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, topK);
      return { matches, count: matches.length };
    },
    async deleteByIds(ids: string[]) {
      calls.deleteByIds.push(ids.length);
      for (const id of ids) store.delete(id);
      return { mutationId: "m" };
    },
  };
  return { binding: binding as unknown as Vectorize, store, calls };
}

describe("vector index", () => {
  it("local: exact cosine top-k per knowledge base, upsert replaces, delete and drop, survives eviction", async () => {
    const index = localVectorIndex(env.LOCAL_VECTOR_INDEX);
    const kbA = unique("kbA");
    const kbB = unique("kbB");
    const v = (...xs: number[]) => xs;
    await index.upsert(kbA, [
      { id: "a1", documentId: "d1", values: v(1, 0, 0) },
      { id: "a2", documentId: "d1", values: v(0.9, 0.1, 0) },
      { id: "a3", documentId: "d2", values: v(0, 1, 0) },
    ]);
    await index.upsert(kbB, [{ id: "b1", documentId: "d9", values: v(1, 0, 0) }]);
    const res = await index.query(kbA, v(2, 0, 0), 2);
    expect(res.map((m) => m.id)).toEqual(["a1", "a2"]);
    expect(res[0].score).toBeCloseTo(1, 6);
    expect((await index.query(kbB, v(1, 0, 0), 10)).map((m) => m.id)).toEqual(["b1"]);

    await index.upsert(kbA, [{ id: "a1", documentId: "d1", values: v(0, 0, 1) }]);
    expect((await index.query(kbA, v(1, 0, 0), 1))[0].id).toBe("a2");
    await index.deleteByIds(kbA, ["a2", "missing"]);
    expect((await index.query(kbA, v(1, 0, 0), 10)).map((m) => m.id).sort()).toEqual(["a1", "a3"]);

    const stub = env.LOCAL_VECTOR_INDEX.get(env.LOCAL_VECTOR_INDEX.idFromName(kbA));
    await evictDurableObject(stub);
    expect(await stub.stats()).toEqual({ count: 2, held: 2, dimensions: 3, quantized: false });
    expect((await index.query(kbA, v(0, 0, 1), 1))[0].id).toBe("a1");

    expect(await index.dropKnowledgeBase(kbA)).toBe(true);
    expect(await index.query(kbA, v(1, 0, 0), 10)).toEqual([]);
    await expect(index.upsert(kbB, [{ id: "b2", documentId: "d9", values: v(1, 0) }])).rejects.toThrow(/dimensions/);
  });

  it("local: holds floats, then 8-bit integers with exact scores, then stores past its budget and holds them again when room is made", async () => {
    // The object's own storage, with a budget of 64 KB (LOCAL_VECTOR_INDEX_MAX_MB, read as every object reads it):
    // 64-dimension vectors, 256 held as floats, 963 in all.
    const D = 64;
    const stub = env.LOCAL_VECTOR_INDEX.get(env.LOCAL_VECTOR_INDEX.idFromName(unique("kbBig")));
    let x = 11;
    const rand = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5;
    const unit = () => {
      const v = Float32Array.from({ length: D }, rand);
      const n = Math.hypot(...v);
      return v.map((c) => c / n);
    };
    const vs = Array.from({ length: 970 }, unit);
    const exactTop = (q: Float32Array, ids: number[], k: number) =>
      ids.map((i) => ({ id: `v${i}`, score: vs[i].reduce((s, c, j) => s + c * q[j], 0) })).sort((a, b) => b.score - a.score).slice(0, k);
    const small = { ...env, LOCAL_VECTOR_INDEX_MAX_MB: String(64 / 1024) };
    // Typed loosely: the object's RPC types are too deep for runInDurableObject's generics (TS2589).
    const inside: any = runInDurableObject;
    await inside(stub, async (_: unknown, state: DurableObjectState) => {
      const index = new LocalVectorIndex(state, small);
      const upsert = (from: number, to: number) => index.upsert(vs.slice(from, to).map((values, k) => ({ id: `v${from + k}`, documentId: "d", values })));
      await upsert(0, 256);
      expect(await index.stats()).toEqual({ count: 256, held: 256, dimensions: D, quantized: false });
      for (let i = 256; i < 970; i += 200) await upsert(i, Math.min(i + 200, 970));
      expect(await index.stats()).toEqual({ count: 970, held: 963, dimensions: D, quantized: true });
      // Quantized, a query still answers the exact best matches with their exact scores (of the vectors held).
      const heldIds = Array.from({ length: 963 }, (_, i) => i);
      for (const q of [unit(), unit(), vs[5], vs[900]]) {
        const got = await index.query(q, 20);
        const want = exactTop(q, heldIds, 20);
        expect(got.map((m: { id: string }) => m.id)).toEqual(want.map((m) => m.id));
        got.forEach((m: { score: number }, i: number) => expect(m.score).toBeCloseTo(want[i].score, 5));
      }
      expect((await index.query(vs[965], 1))[0].id).not.toBe("v965"); // stored, not held: no query sees it
      // A vector already held is still replaced when the budget is used up.
      await index.upsert([{ id: "v0", documentId: "d", values: vs[965] }]);
      expect((await index.query(vs[965], 1))[0]).toMatchObject({ id: "v0", score: expect.closeTo(1, 5) });
      // Room made: the stored vectors are held again.
      await index.deleteByIds(["v1", "v2", "v3", "v4", "v5", "v6", "v7"]);
      expect(await index.stats()).toEqual({ count: 963, held: 963, dimensions: D, quantized: true });
      expect((await index.query(vs[969], 1))[0]).toMatchObject({ id: "v969", score: expect.closeTo(1, 5) });
      // A cold start (a new instance on the same storage) loads up to the budget.
      await index.upsert([0, 1].map((i) => ({ id: `w${i}`, documentId: "d", values: unit() })));
      const cold = new LocalVectorIndex(state, small);
      expect(await cold.stats()).toEqual({ count: 965, held: 963, dimensions: D, quantized: true });
      expect((await cold.query(vs[300], 3))[0]).toMatchObject({ id: "v300", score: expect.closeTo(1, 5) });
      await cold.drop();
      expect(await cold.stats()).toEqual({ count: 0, held: 0, dimensions: 0, quantized: false });
    });
  });

  it("vectorize: namespace per knowledge base, ids only (topK <= 100), batched upserts and deletes", async () => {
    const { binding, store, calls } = fakeVectorize();
    const index = vectorizeIndex(binding);
    const records = Array.from({ length: 2500 }, (_, i) => ({ id: `c${i}`, documentId: "d", values: [1, i / 2500, 0] }));
    await index.upsert("kb_1", records);
    expect(calls.upsert).toEqual([1000, 1000, 500]);
    await index.upsert("kb_2", [{ id: "other", documentId: "x", values: [1, 0, 0] }]);
    const res = await index.query("kb_1", [1, 0, 0], 500);
    expect(res).toHaveLength(100);
    expect(res.every((m) => m.id.startsWith("c"))).toBe(true);
    expect(store.get("c0")?.metadata).toEqual({ document_id: "d" });
    await index.deleteByIds("kb_1", records.map((r) => r.id));
    expect(calls.deleteByIds).toEqual([1000, 1000, 500]);
    expect(await index.dropKnowledgeBase("kb_1")).toBe(false);
  });

  it("vectorize end to end: VECTOR_INDEX=vectorize indexes, searches and cleans up by id", async () => {
    const { binding, store } = fakeVectorize();
    const vEnv = { ...env, VECTOR_INDEX: "vectorize", VECTORIZE: binding };
    expect(vectorIndexFor(vEnv).name).toBe("vectorize");
    expect(() => vectorIndexFor({ ...env, VECTOR_INDEX: "vectorize" })).toThrow(/VECTORIZE binding/);
    const org = await createOrg();
    const kb = await createKb(org);
    const { doc, message } = await seedDocument(kb.id, { filename: "m.md", mime: "text/markdown", body: "# Moths\n\nMoths navigate by the moon.\n\n# Owls\n\nOwls hunt at night." });
    await runConsumer([message], { env: { VECTOR_INDEX: "vectorize", VECTORIZE: binding } });
    expect(store.size).toBe(2);
    expect([...store.values()].every((v) => v.namespace === kb.id)).toBe(true);
    const hits = await searchKnowledgeBase(vEnv, db(), { knowledgeBaseId: kb.id, query: "night hunters owls", fts: false });
    expect(hits[0]).toMatchObject({ document_id: doc.id, heading: "Owls" });
    expect(hits[0].scores.vector).toBeGreaterThan(0);
    await env.DB.prepare("UPDATE documents SET status = 'deleted' WHERE id = ?").bind(doc.id).run();
    await runConsumer([{ type: "gc" }], { env: { VECTOR_INDEX: "vectorize", VECTORIZE: binding } });
    // The gc message only drains what triggers recorded: chunks go first.
    const { purgeStaleChunks, drainGarbage } = await import("../../src/services/documents/cleanup");
    await purgeStaleChunks(db());
    await drainGarbage(vEnv, db());
    expect(store.size).toBe(0);
  });
});

describe("search", () => {
  it("quotes every query term; FTS syntax in the query is inert", () => {
    expect(ftsQuery('what is "NEAR(a b)" OR col:x*')).toBe('"near" OR "b" OR "col" OR "x"');
    expect(ftsQuery("the")).toBe('"the"');
    expect(ftsQuery("  ?!  ")).toBeNull();
  });

  it("stays inside the knowledge base and honours a document filter", async () => {
    const org = await createOrg();
    const kb1 = await createKb(org);
    const kb2 = await createKb(org);
    const a = await seedDocument(kb1.id, { filename: "a.md", mime: "text/markdown", body: "# Penguins\n\nEmperor penguins huddle for warmth." });
    const b = await seedDocument(kb1.id, { filename: "b.md", mime: "text/markdown", body: "# Seals\n\nLeopard seals hunt penguins." });
    const c = await seedDocument(kb2.id, { filename: "c.md", mime: "text/markdown", body: "# Penguins\n\nPenguins everywhere." });
    await runConsumer([a.message, b.message, c.message]);
    const hits = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb1.id, query: "penguins" });
    expect(new Set(hits.map((h) => h.document_id))).toEqual(new Set([a.doc.id, b.doc.id]));
    const only = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb1.id, query: "penguins", documentIds: [b.doc.id] });
    expect(only.map((h) => h.document_id)).toEqual([b.doc.id]);
    const fts = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb1.id, query: 'penguins" OR *', vector: false });
    expect(fts.length).toBe(2);
    expect(fts.every((h) => h.scores.vector === null && h.scores.fts !== null)).toBe(true);
    expect(await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb1.id, query: "" })).toEqual([]);
  });
});
