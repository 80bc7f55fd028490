import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../env";
import { config } from "../../lib/config";
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
 * as one Float32Array for exact cosine search (vectors are stored normalized,
 * so cosine = dot product). It stands in for Vectorize where Vectorize cannot
 * be reached (wrangler dev, tests) and is meant to be good enough for real use
 * there: `npm run bench:vectors` measures a 20,000-chunk knowledge base.
 * Memory: count x dimensions x 4 bytes (20,000 x 512 = 40 MB). An isolate has
 * 128 MB in production, shared with the other objects it runs, so an object
 * holds at most LOCAL_VECTOR_INDEX_MAX_MB (64 MB by default: 32,768 vectors of
 * 512 dimensions, 10,922 of 1,536). Past it, the further vectors are stored but
 * not held: queries do not see them (their passages are found by full text)
 * and the object logs it once. A deletion lets the object hold them again.
 */

declare module "../../env" {
  interface DurableObjectClasses {
    LocalVectorIndex: LocalVectorIndex;
  }
}

export class LocalVectorIndex extends DurableObject<Env> {
  private loaded = false;
  private dims = 0;
  private count = 0;
  private matrix = new Float32Array(0);
  private ids: string[] = [];
  private docs: string[] = [];
  private position = new Map<string, number>();
  /** Vectors in storage that are not held (past the memory budget). */
  private unheld = false;
  private warned = false;
  private readonly maxFloats: number;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.maxFloats = Math.floor((config(env).ingest.localVectorIndexMaxMb * 1024 * 1024) / 4);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, document_id TEXT NOT NULL, vec BLOB NOT NULL)",
    );
  }

  private load() {
    if (this.loaded) return;
    const cursor = this.ctx.storage.sql.exec<{ id: string; document_id: string; vec: ArrayBuffer }>(
      "SELECT id, document_id, vec FROM vectors",
    );
    for (const row of cursor) {
      const v = new Float32Array(row.vec);
      if (!this.holds(row.id, v.length)) {
        this.unheld = true;
        break;
      }
      this.place(row.id, row.document_id, v);
    }
    this.loaded = true;
  }

  /** Vectors of `dims` dimensions this object holds at most. */
  private capacity(dims: number): number {
    return Math.max(1, Math.floor(this.maxFloats / Math.max(1, dims)));
  }

  /** Whether the vector `id` is (or can be) held: already held, or room left. */
  private holds(id: string, dims: number): boolean {
    return this.position.has(id) || this.count < this.capacity(this.count ? this.dims : dims);
  }

  private warnUnheld(total: () => number) {
    if (!this.unheld || this.warned) return;
    this.warned = true;
    const mb = Math.round((this.maxFloats * 4) / 1024 / 1024);
    console.warn(
      `local vector index: holding ${this.count} of ${total()} vectors (${this.dims} dimensions, ${mb} MB, LOCAL_VECTOR_INDEX_MAX_MB); ` +
        "the others' passages are found by full text only. Use Vectorize (VECTOR_INDEX=vectorize) for knowledge bases this large.",
    );
  }

  private place(id: string, documentId: string, v: Float32Array) {
    if (this.count === 0 && this.position.size === 0) this.dims = v.length;
    if (v.length !== this.dims) {
      throw new Error(`vector of ${v.length} dimensions does not match this index's ${this.dims}`);
    }
    let pos = this.position.get(id);
    if (pos === undefined) {
      pos = this.count++;
      if (this.count * this.dims > this.matrix.length) {
        const grown = new Float32Array(Math.min(Math.max(this.count * 2, 1024), this.capacity(this.dims)) * this.dims);
        grown.set(this.matrix);
        this.matrix = grown;
      }
      this.position.set(id, pos);
    }
    this.ids[pos] = id;
    this.docs[pos] = documentId;
    this.matrix.set(v, pos * this.dims);
  }

  private unplace(id: string) {
    const pos = this.position.get(id);
    if (pos === undefined) return;
    const last = this.count - 1;
    if (pos !== last) {
      // Swap the last vector into the hole so the matrix stays dense.
      this.matrix.copyWithin(pos * this.dims, last * this.dims, (last + 1) * this.dims);
      this.ids[pos] = this.ids[last];
      this.docs[pos] = this.docs[last];
      this.position.set(this.ids[pos], pos);
    }
    this.ids.length = last;
    this.docs.length = last;
    this.position.delete(id);
    this.count = last;
    if (this.count === 0) this.dims = 0;
  }

  async upsert(records: { id: string; documentId: string; values: ArrayLike<number> }[]): Promise<number> {
    this.load();
    // All or nothing: check every dimension before changing anything.
    const dims = this.count === 0 ? (records[0]?.values.length ?? 0) : this.dims;
    const bad = records.find((r) => r.values.length !== dims);
    if (bad) throw new Error(`vector of ${bad.values.length} dimensions does not match this index's ${dims}`);
    for (const r of records) {
      const v = normalized(r.values);
      if (this.holds(r.id, v.length)) this.place(r.id, r.documentId, v);
      else this.unheld = true;
      this.ctx.storage.sql.exec("INSERT OR REPLACE INTO vectors (id, document_id, vec) VALUES (?, ?, ?)", r.id, r.documentId, v.buffer);
    }
    this.warnUnheld(() => this.stored());
    return this.count;
  }

  private stored(): number {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM vectors").one().n;
  }

  /** Forgets what is held, so the next call loads from storage again (up to the budget). */
  private unload() {
    this.loaded = false;
    this.unheld = false;
    this.dims = 0;
    this.count = 0;
    this.matrix = new Float32Array(0);
    this.ids = [];
    this.docs = [];
    this.position.clear();
  }

  async query(vector: ArrayLike<number>, topK: number): Promise<VectorMatch[]> {
    this.load();
    const k = Math.max(1, Math.min(Math.floor(topK), LOCAL_MAX_TOP_K, this.count));
    if (this.count === 0) return [];
    const q = normalized(vector);
    if (q.length !== this.dims) throw new Error(`query of ${q.length} dimensions does not match this index's ${this.dims}`);
    const d = this.dims;
    const m = this.matrix;
    // Best k so far, ascending by score; `floor` is the score to beat.
    const bestScore = new Float64Array(k).fill(-Infinity);
    const bestPos = new Int32Array(k).fill(-1);
    let floor = -Infinity;
    for (let i = 0, base = 0; i < this.count; i++, base += d) {
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      let j = 0;
      for (; j + 3 < d; j += 4) {
        s0 += m[base + j] * q[j];
        s1 += m[base + j + 1] * q[j + 1];
        s2 += m[base + j + 2] * q[j + 2];
        s3 += m[base + j + 3] * q[j + 3];
      }
      for (; j < d; j++) s0 += m[base + j] * q[j];
      const s = s0 + s1 + s2 + s3;
      if (s <= floor) continue;
      // Insert into the sorted window, dropping the smallest.
      let at = 0;
      while (at + 1 < k && bestScore[at + 1] < s) {
        bestScore[at] = bestScore[at + 1];
        bestPos[at] = bestPos[at + 1];
        at++;
      }
      bestScore[at] = s;
      bestPos[at] = i;
      floor = bestScore[0];
    }
    const out: VectorMatch[] = [];
    for (let i = k - 1; i >= 0; i--) if (bestPos[i] >= 0) out.push({ id: this.ids[bestPos[i]], score: bestScore[i] });
    return out;
  }

  async deleteByIds(ids: string[]): Promise<number> {
    this.load();
    for (const id of ids) {
      this.ctx.storage.sql.exec("DELETE FROM vectors WHERE id = ?", id);
      this.unplace(id);
    }
    const held = this.count;
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

  /** `count`: vectors stored; `held`: vectors queries search (all of them unless past the memory budget). */
  async stats(): Promise<{ count: number; held: number; dimensions: number }> {
    this.load();
    return { count: this.unheld ? this.stored() : this.count, held: this.count, dimensions: this.dims };
  }
}

/** RPC payloads stay well under limits: 200 vectors of 1,536 floats is ~1.2 MB. */
const UPSERT_BATCH = 200;
const DELETE_BATCH = 1000;

export function localVectorIndex(ns: DurableObjectNamespace<LocalVectorIndex>): VectorIndex {
  const stub = (kbId: string) => ns.get(ns.idFromName(kbId));
  return {
    name: "local",
    maxTopK: LOCAL_MAX_TOP_K,
    async upsert(kbId, records) {
      const s = stub(kbId);
      for (let i = 0; i < records.length; i += UPSERT_BATCH) {
        await s.upsert(records.slice(i, i + UPSERT_BATCH).map((r) => ({ id: r.id, documentId: r.documentId, values: Float32Array.from(r.values) })));
      }
    },
    async query(kbId, vector, topK) {
      return stub(kbId).query(Float32Array.from(vector), topK);
    },
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
