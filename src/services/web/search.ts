import type { Env } from "../../env";
import type { Passage } from "../../contracts/turn";
import { config } from "../../lib/config";

/**
 * Web search through a SearXNG-compatible JSON endpoint (WEB_SEARCH_URL, for
 * example https://searx.example/search). The URL is operator configuration,
 * not user input. Results become sources with a `url` and no document.
 */
export function webSearchConfigured(env: Env): boolean {
  return Boolean(config(env).webSearchUrl);
}

export async function webSearch(env: Env, query: string, limit: number, signal?: AbortSignal): Promise<Passage[]> {
  const url = new URL(config(env).webSearchUrl!);
  url.searchParams.set("q", query);
  url.searchParams.set("format", "json");
  const timeout = AbortSignal.timeout(10_000);
  const res = await fetch(url, {
    headers: { Accept: "application/json" },
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  if (!res.ok) throw new Error(`web search answered ${res.status}`);
  const body = (await res.json()) as { results?: Array<{ title?: string; url?: string; content?: string; score?: number }> };
  return (body.results ?? [])
    .filter((r) => r.url && (r.content || r.title))
    .slice(0, limit)
    .map((r, i) => ({
      document_id: null,
      filename: r.title ?? r.url!,
      chunk_id: null,
      text: [r.title, r.content].filter(Boolean).join(" — "),
      score: typeof r.score === "number" ? r.score : 1 / (i + 1),
      page: null,
      url: r.url!,
    }));
}
