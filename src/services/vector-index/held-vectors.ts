/**
 * The vectors a local vector index object holds in memory (local.ts), within a budget of bytes. While they all fit
 * as 32-bit floats they are held so, and a query scores them exactly. Past that they are held as 8-bit integers
 * with a scale per vector (a quarter of the memory, so about four times as many): a query's scores are then close
 * (within a few thousandths), and the object scores its best candidates again exactly from storage. Past that
 * too, further vectors are not held (`holds` says so).
 *
 * Vectors are unit length (local.ts normalizes them), so a vector's cosine with the query is their dot product.
 */
/** Held vectors as one block of floats (row i is the vector `ids[i]`), as a query hands them to an isolate. */
export interface VectorsCopy {
  ids: string[];
  dims: number;
  vectors: Float32Array;
}

export class HeldVectors {
  dims = 0;
  count = 0;
  /** The id and document of the vector at each position. */
  ids: string[] = [];
  docs: string[] = [];
  private readonly position = new Map<string, number>();
  private floats: Float32Array = new Float32Array(0);
  /** Set once the vectors are quantized: a view over the floats' own buffer (quantize). */
  private bytes: Int8Array | null = null;
  private scales: Float32Array = new Float32Array(0);

  constructor(private readonly budgetBytes: number) {}

  /** Whether the vectors are held as 8-bit integers (a query's scores are close, not exact). */
  get quantized(): boolean {
    return this.bytes !== null;
  }

  /** Vectors of `dims` dimensions held at most as floats. */
  floatCapacity(dims: number): number {
    return Math.max(1, Math.floor(this.budgetBytes / (4 * Math.max(1, dims))));
  }

  /**
   * Vectors of `dims` dimensions held at most in all: as 8-bit integers and a float scale each, in the floats'
   * buffer (four bytes a float, so at most four times as many).
   */
  capacity(dims: number): number {
    const floats = this.floatCapacity(dims);
    return Math.max(floats, Math.min(Math.floor(this.budgetBytes / (Math.max(1, dims) + 4)), 4 * floats));
  }

  /** Whether the vector `id` is held, or can be: already held, or room left. */
  holds(id: string, dims: number): boolean {
    return this.position.has(id) || this.count < this.capacity(this.count ? this.dims : dims);
  }

  /** Holds `v` (unit length) as `id`, replacing the vector held as `id`; the caller checked `holds`. */
  place(id: string, documentId: string, v: Float32Array): void {
    if (this.count === 0 && this.dims !== v.length) {
      this.clear();
      this.dims = v.length;
    }
    if (v.length !== this.dims) throw new Error(`vector of ${v.length} dimensions does not match this index's ${this.dims}`);
    let pos = this.position.get(id);
    if (pos === undefined) {
      pos = this.count;
      this.makeRoom(pos + 1);
      this.count++;
      this.position.set(id, pos);
    }
    this.ids[pos] = id;
    this.docs[pos] = documentId;
    if (this.bytes) this.scales[pos] = quantizeRow(v, this.bytes, pos * this.dims);
    else this.floats.set(v, pos * this.dims);
  }

  /** Lets go of the vector `id`; the last one takes its place, so the rows stay dense. */
  unplace(id: string): void {
    const pos = this.position.get(id);
    if (pos === undefined) return;
    const last = this.count - 1;
    const d = this.dims;
    if (pos !== last) {
      if (this.bytes) {
        this.bytes.copyWithin(pos * d, last * d, (last + 1) * d);
        this.scales[pos] = this.scales[last];
      } else this.floats.copyWithin(pos * d, last * d, (last + 1) * d);
      this.ids[pos] = this.ids[last];
      this.docs[pos] = this.docs[last];
      this.position.set(this.ids[pos], pos);
    }
    this.ids.length = last;
    this.docs.length = last;
    this.position.delete(id);
    this.count = last;
    if (this.count === 0) this.clear();
  }

  clear(): void {
    this.dims = 0;
    this.count = 0;
    this.ids = [];
    this.docs = [];
    this.position.clear();
    this.floats = new Float32Array(0);
    this.bytes = null;
    this.scales = new Float32Array(0);
  }

  /** A copy of the held vectors when they are floats and take at most `maxBytes`; null otherwise. */
  copy(maxBytes: number): VectorsCopy | null {
    if (this.bytes || this.count * this.dims * 4 > maxBytes) return null;
    return { ids: this.ids.slice(), dims: this.dims, vectors: this.floats.slice(0, this.count * this.dims) };
  }

  /** Holds a copy's vectors as they are (its floats are used, not copied again). */
  static fromCopy(copy: VectorsCopy): HeldVectors {
    const held = new HeldVectors(copy.vectors.byteLength);
    const count = copy.ids.length;
    if (copy.vectors.length !== count * copy.dims) throw new Error("a vectors copy's floats do not match its ids");
    held.dims = count ? copy.dims : 0;
    held.count = count;
    held.ids = copy.ids;
    held.docs = new Array<string>(count).fill("");
    copy.ids.forEach((id, i) => held.position.set(id, i));
    held.floats = copy.vectors;
    return held;
  }

  /** The `k` best positions for the unit query `q` and their scores, best first (close scores when quantized). */
  best(q: Float32Array, k: number): { pos: number; score: number }[] {
    const top = new TopK(Math.max(1, Math.min(k, this.count)));
    if (this.bytes) scanBytes(this.bytes, this.scales, this.count, q, top);
    else scanFloats(this.floats, this.count, q, top);
    return top.sorted();
  }

  /**
   * Sizes the memory for the `rows` vectors of `dims` dimensions a cold start loads (before the first): at once,
   * without growing, and as bytes from the start when they will not all fit as floats.
   */
  reserve(rows: number, dims: number): void {
    if (this.count > 0 || rows <= 0) return;
    this.dims = dims;
    const floats = this.floatCapacity(dims);
    this.floats = new Float32Array(Math.min(rows, floats) * dims);
    if (rows <= floats) return;
    this.quantize();
    this.scales = new Float32Array(Math.min(rows, this.capacity(dims)));
  }

  /** Room for `rows` vectors: the floats grow (doubling, up to their capacity), then turn into bytes. */
  private makeRoom(rows: number) {
    const d = this.dims;
    if (this.bytes) {
      if (rows > this.scales.length) this.scales = grownTo(this.scales, Math.min(Math.max(rows * 2, 1024), this.capacity(d)));
      return;
    }
    if (rows * d <= this.floats.length) return;
    if (rows <= this.floatCapacity(d)) {
      const grown = new Float32Array(Math.min(Math.max(rows * 2, 1024), this.floatCapacity(d)) * d);
      grown.set(this.floats);
      this.floats = grown;
      return;
    }
    this.quantize();
  }

  /**
   * The floats become bytes in the same memory (their buffer holds the budget, which the bytes fit), so nothing
   * is allocated but the scales. Row i's bytes go at i × dims, below row i's floats (i × dims × 4), over rows
   * already turned; in row 0, byte j overwrites float j / 4, which was read before it.
   */
  private quantize() {
    const d = this.dims;
    const bytes = new Int8Array(this.floats.buffer, 0, this.capacity(d) * d);
    const scales = new Float32Array(Math.min(Math.max(this.count * 2, 1024), this.capacity(d)));
    for (let i = 0; i < this.count; i++) scales[i] = quantizeRow(this.floats.subarray(i * d, (i + 1) * d), bytes, i * d);
    this.bytes = bytes;
    this.scales = scales;
    this.floats = new Float32Array(0);
  }
}

/**
 * Writes `v` as 8-bit integers at `at` and returns its scale (value ≈ integer × scale). Rounded without
 * Math.round or a branch (four times faster over a cold start's vectors): x in [-127, 127], so x + 128.5 is
 * positive and truncating it rounds half up.
 */
function quantizeRow(v: Float32Array, out: Int8Array, at: number): number {
  let max = 0;
  for (let j = 0; j < v.length; j++) max = Math.max(max, Math.abs(v[j]));
  const inv = max > 0 ? 127 / max : 0; // a zero vector is written as zeros
  for (let j = 0; j < v.length; j++) out[at + j] = ((v[j] * inv + 128.5) | 0) - 128;
  return max > 0 ? max / 127 : 1;
}

function grownTo(a: Float32Array, length: number): Float32Array {
  const grown = new Float32Array(length);
  grown.set(a);
  return grown;
}

/** The best k (score, position) pairs seen, kept ascending: `floor` is the score to beat. */
class TopK {
  floor = -Infinity;
  private readonly scores: Float64Array;
  private readonly positions: Int32Array;
  constructor(private readonly k: number) {
    this.scores = new Float64Array(k).fill(-Infinity);
    this.positions = new Int32Array(k).fill(-1);
  }
  push(score: number, pos: number) {
    let at = 0;
    while (at + 1 < this.k && this.scores[at + 1] < score) {
      this.scores[at] = this.scores[at + 1];
      this.positions[at] = this.positions[at + 1];
      at++;
    }
    this.scores[at] = score;
    this.positions[at] = pos;
    this.floor = this.scores[0];
  }
  sorted(): { pos: number; score: number }[] {
    const out: { pos: number; score: number }[] = [];
    for (let i = this.k - 1; i >= 0; i--) if (this.positions[i] >= 0) out.push({ pos: this.positions[i], score: this.scores[i] });
    return out;
  }
}

// The two scans are apart so each loop sees one kind of array: one loop over both made the float scan 40% slower
// (100,000 × 512 in Node: 45 → 64 ms), its element loads no longer monomorphic.
function scanFloats(m: Float32Array, count: number, q: Float32Array, top: TopK) {
  const d = q.length;
  for (let i = 0, base = 0; i < count; i++, base += d) {
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
    if (s > top.floor) top.push(s, i);
  }
}

function scanBytes(m: Int8Array, scales: Float32Array, count: number, q: Float32Array, top: TopK) {
  const d = q.length;
  for (let i = 0, base = 0; i < count; i++, base += d) {
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    let j = 0;
    for (; j + 3 < d; j += 4) {
      s0 += m[base + j] * q[j];
      s1 += m[base + j + 1] * q[j + 1];
      s2 += m[base + j + 2] * q[j + 2];
      s3 += m[base + j + 3] * q[j + 3];
    }
    for (; j < d; j++) s0 += m[base + j] * q[j];
    const s = (s0 + s1 + s2 + s3) * scales[i];
    if (s > top.floor) top.push(s, i);
  }
}
