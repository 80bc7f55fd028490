/**
 * A knowledge base's lexical statistics for BM25: its number of passages and, per query term, how many passages
 * contain it (lexical.ts). Counting them walks the knowledge base's postings, on the one database every tenant
 * shares: cheap in a small knowledge base, a large share of a search in a large one (`bench:vectors`, 100,000
 * passages: about 50 ms of a 235 ms full-text search). So:
 *
 *  - A knowledge base of LARGE_KB passages or more keeps its counts in the isolate for STATS_TTL_MS: a search
 *    counts only the terms it has not seen there yet (and its total once). One document more or less moves such
 *    counts by a fraction of a percent; the candidates themselves are always read live. A smaller knowledge base
 *    is counted on every search, exactly, as before.
 *  - The same counts bound the candidates' query (lexical.ts candidatesSql). A term in more than COMMON_SHARE of
 *    a large knowledge base's passages matches most of it, and FTS5 scores every passage it matches before it
 *    keeps the best: such a term is left out of the MATCH (the query's rarest MIN_MATCH_TERMS always stay). It
 *    still weighs in the BM25 that ranks the candidates, with its low idf. `bench:vectors`, 100,000 passages of
 *    Zipf-distributed words, 8-word queries: the candidates' query alone 181 → 46 ms (p50).
 */
export const LARGE_KB = 2_000;
export const STATS_TTL_MS = 60_000;
export const COMMON_SHARE = 0.25;
export const MIN_MATCH_TERMS = 2;
/** What the isolate keeps at most (a few MB): terms over all knowledge bases, and terms of one knowledge base. */
const TERMS_KEPT = 50_000;
const TERMS_PER_KB = 10_000;

export interface KbStatistics {
  total: number;
  /** Document frequency by stem. */
  df: Map<string, number>;
  at: number;
}

const kept = new Map<string, KbStatistics>(); // insertion-ordered: the least recently counted first
let termsKept = 0;

function drop(kbId: string): void {
  termsKept -= kept.get(kbId)?.df.size ?? 0;
  kept.delete(kbId);
}

/** The counts kept for a large knowledge base, while fresh; null for a small one (counted every time). */
export function keptStatistics(kbId: string, now = Date.now()): KbStatistics | null {
  const s = kept.get(kbId);
  if (s && now - s.at > STATS_TTL_MS) drop(kbId);
  return s && now - s.at <= STATS_TTL_MS ? s : null;
}

/**
 * The statistics of one search: what was kept, with what the search counted (`counted`: stems it counted;
 * `total` when it counted it). Kept for the next search when the knowledge base is large.
 */
export function searchStatistics(kbId: string, known: KbStatistics | null, counted: { total?: number; df: Map<string, number> }): { total: number; df: Map<string, number> } {
  const total = known?.total ?? counted.total ?? 0;
  const df = new Map([...(known?.df ?? []), ...counted.df]);
  if (total < LARGE_KB) {
    drop(kbId);
    return { total, df };
  }
  const entry = known ?? { total, df: new Map<string, number>(), at: Date.now() };
  drop(kbId);
  for (const [stem, n] of counted.df) if (entry.df.size < TERMS_PER_KB) entry.df.set(stem, n);
  kept.set(kbId, entry);
  termsKept += entry.df.size;
  // Past the isolate's budget, the knowledge bases counted longest ago are forgotten first.
  while (termsKept > TERMS_KEPT && kept.size > 1) drop(kept.keys().next().value!);
  return { total, df };
}

/**
 * The terms the candidates' query matches: all of them, except, in a large knowledge base whose counts are kept,
 * the ones in more than COMMON_SHARE of its passages (the rarest MIN_MATCH_TERMS always stay).
 */
export function matchedTerms<T extends { stem: string }>(terms: T[], known: KbStatistics | null): T[] {
  if (!known || known.total < LARGE_KB) return terms;
  const share = (t: T) => (known.df.get(t.stem) ?? 0) / known.total; // not counted yet: kept
  const rare = terms.filter((t) => share(t) <= COMMON_SHARE);
  if (rare.length >= Math.min(MIN_MATCH_TERMS, terms.length)) return rare;
  return [...terms].sort((a, b) => share(a) - share(b)).slice(0, MIN_MATCH_TERMS);
}

/** Forgets every kept count (tests). */
export function forgetStatistics(): void {
  kept.clear();
  termsKept = 0;
}

/** How many terms the isolate keeps over all knowledge bases (tests). */
export const termsKeptInIsolate = () => termsKept;
