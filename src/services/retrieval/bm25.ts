/** BM25, as every lexical scorer of the service uses it (passages, memories, extractive sentences). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Lucene's BM25 idf: positive even for terms in most texts (FTS5's can reach zero in small knowledge bases). */
export const idf = (total: number, df: number) => Math.log(1 + (total - df + 0.5) / (df + 0.5));

/** A term's saturated frequency: `tf` occurrences in a text of `length` terms, texts averaging `avgLength`. */
export const saturatedTf = (tf: number, length: number, avgLength: number) =>
  (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * length) / avgLength));
