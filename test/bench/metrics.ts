/**
 * Retrieval metrics as trec_eval computes them (the figures BEIR and MTEB
 * publish): nDCG@10 (`ndcg_cut.10`: gain = the judgment's grade, discount
 * log2(rank + 1), ideal DCG from the judged relevant documents), Recall@k
 * (share of the relevant documents in the top k) and MRR@10. Averaged over
 * every judged query, a query with no results counting 0 (trec_eval -c).
 */
export interface Metrics {
  ndcg10: number;
  recall10: number;
  recall100: number;
  mrr10: number;
}

/** trec_eval-style figures of ranked document ids against graded judgments, averaged over all judged queries. */
export function score(runs: Map<string, string[]>, qrels: Map<string, Map<string, number>>, queryIds: string[]): Metrics {
  let ndcg = 0;
  let r10 = 0;
  let r100 = 0;
  let mrr = 0;
  for (const q of queryIds) {
    const rel = qrels.get(q)!;
    const ranked = runs.get(q) ?? [];
    const relevant = [...rel.values()].filter((g) => g > 0);
    let dcg = 0;
    ranked.slice(0, 10).forEach((d, i) => {
      const g = rel.get(d) ?? 0;
      if (g > 0) dcg += g / Math.log2(i + 2);
    });
    const idcg = [...relevant].sort((a, b) => b - a).slice(0, 10).reduce((s, g, i) => s + g / Math.log2(i + 2), 0);
    ndcg += idcg ? dcg / idcg : 0;
    const found = (k: number) => ranked.slice(0, k).filter((d) => (rel.get(d) ?? 0) > 0).length;
    r10 += relevant.length ? found(10) / relevant.length : 0;
    r100 += relevant.length ? found(100) / relevant.length : 0;
    const first = ranked.slice(0, 10).findIndex((d) => (rel.get(d) ?? 0) > 0);
    mrr += first >= 0 ? 1 / (first + 1) : 0;
  }
  const n = queryIds.length || 1;
  return { ndcg10: ndcg / n, recall10: r10 / n, recall100: r100 / n, mrr10: mrr / n };
}

