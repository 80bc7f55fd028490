import { describe, expect, it } from "vitest";
import { score } from "../bench/metrics";

describe("evaluation metrics (trec_eval conventions)", () => {
  it("computes nDCG@10 with graded gains, Recall@10/100 and MRR@10 averaged over every judged query", () => {
    const qrels = new Map([
      ["q1", new Map([["a", 1]])],
      ["q2", new Map([["a", 2], ["b", 1]])],
      ["q3", new Map([["c", 1]])],
      ["q4", new Map([["d", 1], ["e", 0]])],
    ]);
    const filler = Array.from({ length: 60 }, (_, i) => `x${i}`);
    const runs = new Map([
      ["q1", ["x", "a"]],
      ["q2", ["b", "a"]],
      // q3: nothing retrieved -> 0 everywhere.
      ["q4", ["e", ...filler, "d"]],
    ]);
    const m = score(runs, qrels, ["q1", "q2", "q3", "q4"]);
    const q1 = 1 / Math.log2(3);
    const q2 = (1 + 2 / Math.log2(3)) / (2 + 1 / Math.log2(3));
    expect(m.ndcg10).toBeCloseTo((q1 + q2 + 0 + 0) / 4, 10);
    expect(m.recall10).toBeCloseTo((1 + 1 + 0 + 0) / 4, 10);
    expect(m.recall100).toBeCloseTo((1 + 1 + 0 + 1) / 4, 10);
    expect(m.mrr10).toBeCloseTo((0.5 + 1 + 0 + 0) / 4, 10);
  });
});
