import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { config } from "../../lib/config";
import { HeldVectors, type VectorsCopy } from "./held-vectors";
import { copyMatches, COPY_MAX_BYTES, keepCopy } from "./isolate-copies";
import type { VectorIndex, VectorMatch } from "./types";

/** Same ceiling as Vectorize without metadata, so callers behave alike on both. */
export const LOCAL_MAX_TOP_K = 100;

function normalized(values: ArrayLike<number>): Float32Array {
  const v = Float32Array.from(values);
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
  return v;
}

/**
 * The local vector index: one Durable Object per knowledge base (so isolation
 * is structural), vectors persisted in its SQLite storage and held in memory
 * for exact cosine search (vectors are stored normalized, so cosine = dot
 * product). It stands in for Vectorize where Vectorize cannot be reached
 * (wrangler dev, tests) and is meant to be good enough for real use there:
 * `npm run bench:vectors` measures a 20,000-chunk knowledge base.
 * Memory: an isolate has 128 MB in production, shared with the other objects
 * it runs, so an object holds at most LOCAL_VECTOR_INDEX_MAX_MB (64 MB by
 * default) of vectors (./held-vectors.ts): as floats while they fit (32,768 of
 * 512 dimensions, 10,922 of 1,536), then as 8-bit integers (130,055 of 512,
 * 43,577 of 1,536), whose best candidates a query scores again exactly from
 * storage. Past that, further vectors are stored but not held: queries do not
 * see them (their passages are found by full text) and the object logs it
 * once. A deletion lets the object hold them again.
 */

declare module "../../env" {
  interface DurableObjectClasses {
    LocalVectorIndex: LocalVectorIndex;
  }
}

export class LocalVectorIndex extends DurableObject<Env> {
  private loaded = false;
  private readonly held: HeldVectors;
  /** Vectors in storage that are not held (past the memory budget). */
  private unheld = false;
  private warned = false;
  private readonly budgetBytes: number;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.budgetBytes = Math.floor(config(env).ingest.localVectorIndexMaxMb * 1024 * 1024);
    this.held = new HeldVectors(this.budgetBytes);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, document_id TEXT NOT NULL, vec BLOB NOT NULL)",
    );
  }

  private load() {
    if (this.loaded) return;
    const total = this.stored(); // so the memory is sized once (HeldVectors.reserve)
    const cursor = this.ctx.storage.sql.exec<{ id: string; document_id: string; vec: ArrayBuffer }>(
      "SELECT id, document_id, vec FROM vectors",
    );
    for (const row of cursor) {
      const v = new Float32Array(row.vec);
      if (this.held.count === 0) this.held.reserve(total, v.length);
      if (!this.held.holds(row.id, v.length)) {
        this.unheld = true;
        break;
      }
      this.held.place(row.id, row.document_id, v);
    }
    this.loaded = true;
  }

  private warnUnheld(total: () => number) {
    if (!this.unheld || this.warned) return;
    this.warned = true;
    const mb = Number((this.budgetBytes / 1024 / 1024).toFixed(2));
    console.warn(
      `local vector index: holding ${this.held.count} of ${total()} vectors (${this.held.dims} dimensions, ${mb} MB, LOCAL_VECTOR_INDEX_MAX_MB); ` +
        "the others' passages are found by full text only. Use Vectorize (VECTOR_INDEX=vectorize) for knowledge bases this large.",
    );
  }

  async upsert(records: { id: string; documentId: string; values: ArrayLike<number> }[]): Promise<number> {
    this.load();
    // All or nothing: check every dimension before changing anything.
    const dims = this.held.count === 0 ? (records[0]?.values.length ?? 0) : this.held.dims;
    const bad = records.find((r) => r.values.length !== dims);
    if (bad) throw new Error(`vector of ${bad.values.length} dimensions does not match this index's ${dims}`);
    for (const r of records) {
      const v = normalized(r.values);
      if (this.held.holds(r.id, v.length)) this.held.place(r.id, r.documentId, v);
      else this.unheld = true;
      this.ctx.storage.sql.exec("INSERT OR REPLACE INTO vectors (id, document_id, vec) VALUES (?, ?, ?)", r.id, r.documentId, v.buffer);
    }
    this.warnUnheld(() => this.stored());
    return this.held.count;
  }

  private stored(): number {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM vectors").one().n;
  }

  /** Forgets what is held, so the next call loads from storage again (up to the budget). */
  private unload() {
    this.loaded = false;
    this.unheld = false;
    this.held.clear();
  }

  async query(vector: ArrayLike<number>, topK: number): Promise<VectorMatch[]> {
    this.load();
    const held = this.held;
    if (held.count === 0) return [];
    const k = Math.max(1, Math.min(Math.floor(topK), LOCAL_MAX_TOP_K, held.count));
    const q = normalized(vector);
    if (q.length !== held.dims) throw new Error(`query of ${q.length} dimensions does not match this index's ${held.dims}`);
    if (!held.quantized) return held.best(q, k).map(({ pos, score }) => ({ id: held.ids[pos], score }));
    // Quantized scores are close: the best of a wider window are scored again exactly from the stored floats.
    const window = held.best(q, Math.min(held.count, RESCORED_WINDOW(k))).map(({ pos }) => held.ids[pos]);
    return this.exactScores(window, q).slice(0, k);
  }

  /**
   * A query's matches and, when the held vectors are floats of at most `copyMaxBytes` and all stored vectors are
   * held, a copy of them for the calling isolate (./isolate-copies.ts).
   */
  async queryWithCopy(vector: ArrayLike<number>, topK: number, copyMaxBytes: number): Promise<{ matches: VectorMatch[]; copy: VectorsCopy | null }> {
    const matches = await this.query(vector, topK);
    return { matches, copy: this.unheld ? null : this.held.copy(copyMaxBytes) };
  }

  /** The stored vectors of `ids` scored exactly against `q`, best first. */
  private exactScores(ids: string[], q: Float32Array): VectorMatch[] {
    const rows = this.ctx.storage.sql.exec<{ id: string; vec: ArrayBuffer }>(
      "SELECT id, vec FROM vectors WHERE id IN (SELECT value FROM json_each(?))",
      JSON.stringify(ids),
    );
    const out: VectorMatch[] = [];
    for (const row of rows) out.push({ id: row.id, score: dot(new Float32Array(row.vec), q) });
    return out.sort((a, b) => b.score - a.score);
  }

  async deleteByIds(ids: string[]): Promise<number> {
    this.load();
    for (const id of ids) {
      this.ctx.storage.sql.exec("DELETE FROM vectors WHERE id = ?", id);
      this.held.unplace(id);
    }
    const held = this.held.count;
    // Room was made: vectors stored but not held may fit now (loaded again on the next call).
    if (this.unheld && ids.length) this.unload();
    return held;
  }

  async drop(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, document_id TEXT NOT NULL, vec BLOB NOT NULL)",
    );
    this.unload();
    this.loaded = true;
  }

  /**
   * `count`: vectors stored; `held`: vectors queries search (all of them unless past the memory budget);
   * `quantized`: held as 8-bit integers (past what fits as floats; queries still return exact scores).
   */
  async stats(): Promise<{ count: number; held: number; dimensions: number; quantized: boolean }> {
    this.load();
    return { count: this.unheld ? this.stored() : this.held.count, held: this.held.count, dimensions: this.held.dims, quantized: this.held.quantized };
  }
}

/**
 * Quantized candidates scored again exactly for a query of `k`: the true best k are among them unless a score
 * is off by more than the gap to the window's edge, far more than quantization's few thousandths.
 */
const RESCORED_WINDOW = (k: number) => 2 * k + 16;

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** RPC payloads stay well under limits: 200 vectors of 1,536 floats is ~1.2 MB. */
const UPSERT_BATCH = 200;
const DELETE_BATCH = 1000;

export function localVectorIndex(ns: DurableObjectNamespace<LocalVectorIndex>): VectorIndex {
  const stub = (kbId: string) => ns.get(ns.idFromName(kbId));
  const queryCopy = (kbId: string, vector: ArrayLike<number>, topK: number, version: number) =>
    copyMatches(kbId, version, normalized(vector), Math.max(1, Math.min(Math.floor(topK), LOCAL_MAX_TOP_K)));
  return {
    name: "local",
    maxTopK: LOCAL_MAX_TOP_K,
    async upsert(kbId, records) {
      const s = stub(kbId);
      for (let i = 0; i < records.length; i += UPSERT_BATCH) {
        await s.upsert(records.slice(i, i + UPSERT_BATCH).map((r) => ({ id: r.id, documentId: r.documentId, values: Float32Array.from(r.values) })));
      }
    },
    async query(kbId, vector, topK, version) {
      if (version === undefined) return stub(kbId).query(Float32Array.from(vector), topK);
      const held = queryCopy(kbId, vector, topK, version);
      if (held) return held;
      const { matches, copy } = await stub(kbId).queryWithCopy(Float32Array.from(vector), topK, COPY_MAX_BYTES);
      if (copy) keepCopy(kbId, version, copy);
      return matches;
    },
    queryCopy,
    async deleteByIds(kbId, ids) {
      const s = stub(kbId);
      for (let i = 0; i < ids.length; i += DELETE_BATCH) await s.deleteByIds(ids.slice(i, i + DELETE_BATCH));
    },
    async dropKnowledgeBase(kbId) {
      await stub(kbId).drop();
      return true;
    },
  };
}
