/**
 * A knowledge base's lexical statistics for BM25: its number of passages and, per query term, how many passages
 * contain it (lexical.ts). Counting them walks the knowledge base's postings, on the one database every tenant
 * shares: cheap in a small knowledge base, a large share of a search in a large one (`bench:vectors`, 100,000
 * passages: about 50 ms of a 235 ms full-text search). So:
 *
 *  - A knowledge base of LARGE_KB passages or more keeps its counts in the isolate, each for STATS_TTL_MS: a
 *    search counts only the terms without a fresh count there (and the total when its count is old). One
 *    document more or less moves such counts by a fraction of a percent; the candidates themselves are always
 *    read live. A smaller knowledge base is counted on every search, exactly, as before.
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
  totalAt: number;
  /** Document frequency by stem, and when it was counted. */
  df: Map<string, { n: number; at: number }>;
}

const kept = new Map<string, KbStatistics>(); // insertion-ordered: the least recently counted first
let termsKept = 0;

function drop(kbId: string): void {
  termsKept -= kept.get(kbId)?.df.size ?? 0;
  kept.delete(kbId);
}

/** The counts kept for a large knowledge base (fresh or not: see toCount); null for a small one. */
export function keptStatistics(kbId: string): KbStatistics | null {
  return kept.get(kbId) ?? null;
}

/**
 * What a search counts: the total unless a fresh one is kept, and the stems without a fresh count. Counts older
 * than STATS_TTL_MS are counted again in the search's batch, and meanwhile still choose the words of its MATCH.
 */
export function toCount<T extends { stem: string }>(known: KbStatistics | null, terms: T[], now = Date.now()): { total: boolean; terms: T[] } {
  const fresh = (at: number) => now - at <= STATS_TTL_MS;
  return {
    total: !known || !fresh(known.totalAt),
    terms: terms.filter((t) => {
      const d = known?.df.get(t.stem);
      return !d || !fresh(d.at);
    }),
  };
}

/**
 * The statistics of one search for its stems: what it counted (`counted`: the stems it counted, and `total` when
 * it counted it), and what was kept for the others. Kept for the next search when the knowledge base is large.
 */
export function searchStatistics(
  kbId: string,
  known: KbStatistics | null,
  counted: { total?: number; df: Map<string, number> },
  stems: string[],
): { total: number; df: Map<string, number> } {
  const total = counted.total ?? known?.total ?? 0;
  const df = new Map(stems.map((s) => [s, counted.df.get(s) ?? known?.df.get(s)?.n ?? 0]));
  if (total < LARGE_KB) {
    drop(kbId);
    return { total, df };
  }
  const now = Date.now();
  const entry = known ?? { total, totalAt: now, df: new Map() };
  drop(kbId);
  if (counted.total !== undefined) Object.assign(entry, { total: counted.total, totalAt: now });
  for (const [stem, n] of counted.df) if (entry.df.has(stem) || entry.df.size < TERMS_PER_KB) entry.df.set(stem, { n, at: now });
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
  const share = (t: T) => (known.df.get(t.stem)?.n ?? 0) / known.total; // not counted yet: kept
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
