import { describe, expect, it } from "vitest";
import { HeldVectors } from "../../src/services/vector-index/held-vectors";

/** A deterministic random unit vector (a small LCG, so failures reproduce). */
function unitVectors(n: number, d: number, seed = 7): Float32Array[] {
  let x = seed;
  const next = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5;
  return Array.from({ length: n }, () => {
    const v = Float32Array.from({ length: d }, next);
    const norm = Math.hypot(...v);
    return v.map((c) => c / norm);
  });
}
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, c, i) => s + c * b[i], 0);

describe("held vectors (the local vector index's memory)", () => {
  it("holds floats while they fit, then 8-bit integers: four times as many in the same budget", () => {
    const mb64 = new HeldVectors(64 * 1024 * 1024);
    expect([mb64.floatCapacity(512), mb64.capacity(512)]).toEqual([32_768, 130_055]);
    expect([mb64.floatCapacity(1536), mb64.capacity(1536)]).toEqual([10_922, 43_577]);
    // Never more bytes than the floats' buffer has.
    expect(mb64.capacity(262_144)).toBe(255);
    expect(new HeldVectors(100).capacity(64)).toBe(1);
  });

  it("turns its floats into bytes in place: the same vectors, scores within a few thousandths", () => {
    const d = 64;
    const held = new HeldVectors(d * 4 * 10); // 10 as floats, 37 in all
    expect([held.floatCapacity(d), held.capacity(d)]).toEqual([10, 37]);
    const vs = unitVectors(38, d);
    for (let i = 0; i < 10; i++) held.place(`v${i}`, "doc", vs[i]);
    expect(held.quantized).toBe(false);
    // Floats: exact.
    expect(held.best(vs[3], 1)).toEqual([{ pos: 3, score: expect.closeTo(1, 6) }]);
    for (let i = 10; i < 37; i++) {
      expect(held.holds(`v${i}`, d)).toBe(true);
      held.place(`v${i}`, "doc", vs[i]);
    }
    expect(held.quantized).toBe(true);
    expect(held.count).toBe(37);
    expect(held.holds("v37", d)).toBe(false);
    expect(held.holds("v5", d)).toBe(true); // already held: replaced
    const query = unitVectors(1, d, 99)[0];
    const exact = vs.slice(0, 37).map((v, i) => ({ id: `v${i}`, score: dot(v, query) })).sort((a, b) => b.score - a.score);
    const close = held.best(query, 37);
    expect(close).toHaveLength(37);
    for (const { pos, score } of close) expect(Math.abs(score - dot(vs[pos], query))).toBeLessThan(0.01);
    // Rounded to the nearest step (truncating would be off by half a step on average).
    let error = 0;
    for (const q of vs.slice(0, 37)) for (const { pos, score } of held.best(q, 37)) error += Math.abs(score - dot(vs[pos], q));
    expect(error / (37 * 37)).toBeLessThan(0.0006); // 0.0004 here; truncating: 0.0008
    // Each vector, turned in place, is still nearest to itself.
    for (const i of [0, 1, 9, 10, 36]) expect(held.ids[held.best(vs[i], 1)[0].pos]).toBe(`v${i}`);
    expect(held.ids[close[0].pos]).toBe(exact[0].id);
  });

  it("sizes a cold start's memory at once: floats when all fit, bytes from the start when not", () => {
    const d = 16;
    const vs = unitVectors(30, d, 5);
    const fits = new HeldVectors(d * 4 * 10);
    fits.reserve(8, d);
    for (let i = 0; i < 8; i++) fits.place(`v${i}`, "doc", vs[i]);
    expect([fits.quantized, fits.count]).toEqual([false, 8]);
    expect(fits.best(vs[7], 1)).toEqual([{ pos: 7, score: expect.closeTo(1, 6) }]);
    const past = new HeldVectors(d * 4 * 10); // 10 as floats, 32 in all
    past.reserve(30, d);
    expect(past.quantized).toBe(true);
    for (let i = 0; i < 30; i++) past.place(`v${i}`, "doc", vs[i]);
    for (const i of [0, 12, 29]) expect(past.ids[past.best(vs[i], 1)[0].pos]).toBe(`v${i}`);
    // A vector of other dimensions into an empty reserve starts over at its own.
    const other = new HeldVectors(d * 4 * 10);
    other.reserve(30, d);
    other.place("w", "doc", unitVectors(1, 4)[0]);
    expect([other.dims, other.count, other.quantized]).toEqual([4, 1, false]);
  });

  it("lets go of a vector and replaces one while quantized, keeping ids, documents and scales together", () => {
    const d = 32;
    const held = new HeldVectors(d * 4 * 4);
    const vs = unitVectors(12, d, 3);
    for (let i = 0; i < 12; i++) held.place(`v${i}`, `d${i}`, vs[i]);
    expect(held.quantized).toBe(true);
    held.unplace("v2"); // the last (v11) takes its place
    expect(held.count).toBe(11);
    expect(held.ids[2]).toBe("v11");
    expect(held.docs[2]).toBe("d11");
    expect(held.ids[held.best(vs[11], 1)[0].pos]).toBe("v11");
    expect(held.best(vs[11], 1)[0].score).toBeCloseTo(1, 2);
    held.place("v0", "d0", vs[2]); // replaced: v0 now points where v2 did
    expect(held.ids[held.best(vs[2], 1)[0].pos]).toBe("v0");
    expect(held.count).toBe(11);
    for (const id of [...held.ids]) held.unplace(id);
    expect([held.count, held.dims, held.quantized]).toEqual([0, 0, false]);
    held.place("w", "d", unitVectors(1, 8)[0]); // empty again: any dimensions, floats
    expect([held.dims, held.quantized]).toEqual([8, false]);
  });
});
