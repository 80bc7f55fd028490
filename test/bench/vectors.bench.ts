import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { it } from "vitest";
import { createDb } from "../../src/db/client";
import { hashEmbedder } from "../../src/services/embeddings/hash";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { localVectorIndex } from "../../src/services/vector-index/local";

/**
 * The local vector index at the size the issue asks for: a 20,000-chunk
 * knowledge base. Prints p50/p95 of (a) a top-40 query to the Durable Object
 * and (b) a whole searchKnowledgeBase (FTS5 + vectors + D1 join), from the
 * calling Worker. Run with `npm run bench:vectors` (BENCH_CHUNKS to resize).
 */
const N = Number((env as unknown as { BENCH_CHUNKS?: string }).BENCH_CHUNKS ?? 20_000);
const QUERIES = 200;
// A vocabulary of 3,000 pseudo-words drawn with a Zipf distribution, like real text:
// a few words are everywhere, most are rare.
const SYLLABLES = "ka lo mi ne ru sa ti vo ze pa qui dor fen gal hus jin kem lar mon pex".split(" ");
const VOCAB = Array.from({ length: 3000 }, (_, i) => {
  let w = "";
  for (let n = i + 7; n > 0; n = Math.floor(n / SYLLABLES.length)) w += SYLLABLES[n % SYLLABLES.length];
  return w;
});
const ZIPF = (() => {
  const weights = VOCAB.map((_, r) => 1 / (r + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => (acc += w / total));
})();

function text(i: number): string {
  let x = (i * 2654435761) >>> 0;
  const words: string[] = [];
  for (let w = 0; w < 80; w++) {
    x = (x * 1103515245 + 12345) >>> 0;
    const u = x / 2 ** 32;
    let lo = 0;
    let hi = ZIPF.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ZIPF[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    words.push(VOCAB[lo]);
  }
  return `Passage ${i}: ${words.join(" ")}.`;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

it(`local vector index: ${N} chunks`, async () => {
  const embedder = hashEmbedder(512);
  const index = localVectorIndex(env.LOCAL_VECTOR_INDEX);
  const db = createDb(env.DB);
  const kbId = `kb_bench${Date.now()}`;
  const now = new Date().toISOString();

  // D1 rows so the full search path (FTS + join) is measured too.
  await env.DB.batch([
    env.DB.prepare("INSERT INTO organizations (id, name, slug, type, status, created_at, updated_at) VALUES ('org_bench', 'Bench', ?, 'business', 'active', ?, ?)").bind(`bench-${Date.now()}`, now, now),
    env.DB.prepare("INSERT INTO environments (id, organization_id, name, created_at, updated_at) VALUES ('env_bench', 'org_bench', 'default', ?, ?)").bind(now, now),
    env.DB.prepare("INSERT INTO tenants (id, organization_id, environment_id, name, created_at, updated_at) VALUES ('ten_bench', 'org_bench', 'env_bench', 'bench', ?, ?)").bind(now, now),
    env.DB.prepare(
      "INSERT INTO knowledge_bases (id, organization_id, environment_id, tenant_id, name, embedding_model, embedding_dimensions, created_at, updated_at) VALUES (?, 'org_bench', 'env_bench', 'ten_bench', 'bench', ?, 512, ?, ?)",
    ).bind(kbId, embedder.model, now, now),
    env.DB.prepare(
      "INSERT INTO documents (id, organization_id, environment_id, tenant_id, knowledge_base_id, filename, mime_type, size_bytes, status, s3_key, ingest_seq, index_generation, created_at, updated_at) VALUES ('doc_bench', 'org_bench', 'env_bench', 'ten_bench', ?, 'bench.md', 'text/markdown', 1, 'processed', ?, 1, 1, ?, ?)",
    ).bind(kbId, `bench/${kbId}`, now, now),
  ]);

  let t = Date.now();
  for (let start = 0; start < N; start += 500) {
    const ids = Array.from({ length: Math.min(500, N - start) }, (_, k) => start + k);
    const texts = ids.map(text);
    const vectors = await embedder.embed(texts, "document");
    await index.upsert(kbId, ids.map((i, k) => ({ id: `doc_bench:1:${i}`, documentId: "doc_bench", values: vectors[k] })));
    const rows = ids.map((i, k) => ({ id: `doc_bench:1:${i}`, ordinal: i, body: texts[k] }));
    await env.DB.prepare(
      `INSERT INTO chunks (id, document_id, knowledge_base_id, tenant_id, generation, ordinal, title, heading, body, token_count, embedded, created_at)
       SELECT json_extract(value,'$.id'), 'doc_bench', ?, 'ten_bench', 1, json_extract(value,'$.ordinal'), 'bench.md', '', json_extract(value,'$.body'), 100, 1, ?
       FROM json_each(?)`,
    ).bind(kbId, now, JSON.stringify(rows)).run();
  }
  const loadMs = Date.now() - t;

  const stub = env.LOCAL_VECTOR_INDEX.get(env.LOCAL_VECTOR_INDEX.idFromName(kbId));
  await evictDurableObject(stub);
  const queryVectors = await embedder.embed(Array.from({ length: QUERIES }, (_, i) => text(N + i).slice(0, 80)), "query");
  t = Date.now();
  await index.query(kbId, queryVectors[0], 40);
  const coldMs = Date.now() - t;

  const dq: number[] = [];
  for (const v of queryVectors) {
    t = Date.now();
    await index.query(kbId, v, 40);
    dq.push(Date.now() - t);
  }
  const sq: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    t = Date.now();
    await searchKnowledgeBase(env, db, { knowledgeBaseId: kbId, query: text(N + i).split(" ").slice(2, 10).join(" "), limit: 10 });
    sq.push(Date.now() - t);
  }
  const fq: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    t = Date.now();
    await searchKnowledgeBase(env, db, { knowledgeBaseId: kbId, query: text(N + i).split(" ").slice(2, 10).join(" "), limit: 10, vector: false });
    fq.push(Date.now() - t);
  }
  const stats = await stub.stats();
  console.log(
    [
      ``,
      `Local vector index, ${stats.count} chunks x ${stats.dimensions} dimensions (hash-v1-512), ${stats.held} held${stats.quantized ? " as 8-bit integers" : " as floats"}:`,
      `  load (embed + upsert + D1 insert): ${(loadMs / 1000).toFixed(1)} s`,
      `  first query after eviction (loads vectors from SQLite): ${coldMs} ms`,
      `  Durable Object query, top 40, ${QUERIES} queries: p50 ${pct(dq, 50)} ms, p95 ${pct(dq, 95)} ms, max ${Math.max(...dq)} ms`,
      `  searchKnowledgeBase, full-text only, 8-word queries, top 10: p50 ${pct(fq, 50)} ms, p95 ${pct(fq, 95)} ms, max ${Math.max(...fq)} ms`,
      `  searchKnowledgeBase (FTS5 + vectors + D1 join), top 10: p50 ${pct(sq, 50)} ms, p95 ${pct(sq, 95)} ms, max ${Math.max(...sq)} ms`,
      ``,
    ].join("\n"),
  );
});
