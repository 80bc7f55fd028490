import type { Env } from "../../env";
import { retrievalConfig } from "../../lib/config";

/**
 * The optional reranking stage (RERANK_PROVIDER, off by default): the best
 * fused passages (RERANK_DEPTH) are scored against the query by a
 * cross-encoder and reordered. A reranker that fails or times out never fails
 * the search: the fused order stands and the failure is logged.
 *
 *  - `http`: any Cohere/Jina/Voyage/TEI-style endpoint (RERANK_URL):
 *    POST {model, query, documents, top_n} -> {results: [{index, relevance_score}]}
 *    (also accepted: {data: [...]} and TEI's bare [{index, score}]).
 *  - `workers-ai`: Workers AI's `@cf/baai/bge-reranker-base` (or RERANK_MODEL)
 *    through the AI binding: {query, contexts: [{text}], top_k} -> {response: [{id, score}]}.
 */
export interface RerankCandidate {
  text: string;
  heading?: string | null;
  filename?: string | null;
}

export interface RerankResult {
  /** Index into the candidates given. */
  index: number;
  score: number;
}

export interface Reranker {
  readonly provider: "http" | "workers-ai";
  readonly model: string;
  /** Candidates best first by relevance (possibly fewer than given); null when unavailable. */
  rerank(query: string, candidates: RerankCandidate[]): Promise<RerankResult[] | null>;
}

/** What the cross-encoder reads of a passage: where it comes from, then its text (cross-encoders read ~512 tokens). */
export function rerankText(c: RerankCandidate): string {
  const context = [c.filename, c.heading].filter(Boolean).join(" > ");
  return (context ? `${context}\n${c.text}` : c.text).slice(0, 4000);
}

/** Keeps valid, distinct indices in the order given; anything malformed yields null. */
export function normalizeResults(raw: unknown, count: number): RerankResult[] | null {
  if (!Array.isArray(raw)) return null;
  const seen = new Set<number>();
  const out: RerankResult[] = [];
  for (const item of raw as Array<Record<string, unknown>>) {
    const index = Number(item?.index ?? item?.id);
    const score = Number(item?.relevance_score ?? item?.score);
    if (!Number.isInteger(index) || index < 0 || index >= count || seen.has(index) || !Number.isFinite(score)) return null;
    seen.add(index);
    out.push({ index, score });
  }
  // Providers return results best first, but nothing in the contracts promises it.
  return out.sort((a, b) => b.score - a.score);
}

async function withTimeout<T>(ms: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`reranker timed out after ${ms} ms`)), ms);
  try {
    return await run(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

export function httpReranker(opts: { url: string; apiKey?: string; model: string; timeoutMs: number }): Reranker {
  return {
    provider: "http",
    model: opts.model,
    async rerank(query, candidates) {
      try {
        return await withTimeout(opts.timeoutMs, async (signal) => {
          const res = await fetch(opts.url, {
            method: "POST",
            signal,
            headers: { "Content-Type": "application/json", ...(opts.apiKey ? { Authorization: `Bearer ${opts.apiKey}` } : {}) },
            body: JSON.stringify({
              ...(opts.model ? { model: opts.model } : {}),
              query,
              documents: candidates.map(rerankText),
              top_n: candidates.length,
            }),
          });
          if (!res.ok) throw new Error(`reranker answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
          const body = (await res.json()) as { results?: unknown; data?: unknown } | unknown[];
          const raw = Array.isArray(body) ? body : (body?.results ?? body?.data);
          const results = normalizeResults(raw, candidates.length);
          if (!results) throw new Error("reranker answered in an unexpected shape");
          return results;
        });
      } catch (e) {
        console.warn("reranking skipped:", e instanceof Error ? e.message : e);
        return null;
      }
    },
  };
}

export const WORKERS_AI_RERANK_MODEL = "@cf/baai/bge-reranker-base";

export function workersAiReranker(ai: Ai, model: string, timeoutMs: number): Reranker {
  return {
    provider: "workers-ai",
    model,
    async rerank(query, candidates) {
      try {
        return await withTimeout(timeoutMs, async () => {
          const res = (await (ai as unknown as { run(m: string, input: unknown): Promise<unknown> }).run(model, {
            query,
            contexts: candidates.map((c) => ({ text: rerankText(c) })),
            top_k: candidates.length,
          })) as { response?: unknown };
          const results = normalizeResults(res?.response, candidates.length);
          if (!results) throw new Error("Workers AI reranker answered in an unexpected shape");
          return results;
        });
      } catch (e) {
        console.warn("reranking skipped:", e instanceof Error ? e.message : e);
        return null;
      }
    },
  };
}

/** The configured reranker, or null (RERANK_PROVIDER unset or `off`, or not usable as configured: logged). */
export function rerankerFor(env: Env): Reranker | null {
  const cfg = retrievalConfig(env).rerank;
  switch (cfg.provider) {
    case "http":
      if (!cfg.url) {
        console.warn("RERANK_PROVIDER=http but RERANK_URL is not set; reranking is off");
        return null;
      }
      return httpReranker({ url: cfg.url, apiKey: cfg.apiKey, model: cfg.model ?? "", timeoutMs: cfg.timeoutMs });
    case "workers-ai":
      if (!env.AI) {
        console.warn("RERANK_PROVIDER=workers-ai but the AI binding is not configured; reranking is off");
        return null;
      }
      return workersAiReranker(env.AI, cfg.model ?? WORKERS_AI_RERANK_MODEL, cfg.timeoutMs);
    default:
      return null;
  }
}
