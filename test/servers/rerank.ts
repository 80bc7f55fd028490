import type { Handler } from "./index";

/**
 * A Cohere/Jina-style reranking server: POST /rerank {model, query, documents,
 * top_n} -> {results: [{index, relevance_score}]}, best first. The score is the
 * share of the query's words found in the document, so tests can predict the
 * order. Behaviour is chosen by the model name (tests run in parallel):
 *  - `tei-<token>`: answers TEI's bare array [{index, score}].
 *  - `fail-<token>`: 500.  `slow-<token>`: answers after 1.5 s.
 *  - `garbage-<token>`: 200 with an index out of range.
 *  - `reverse-<token>`: scores the documents in reverse order of the request (the last one best).
 * The last request per model: GET /last?model=... -> {authorization, body}.
 */
const last = new Map<string, { authorization: string | null; body: unknown }>();

const words = (s: string) => new Set(s.toLowerCase().match(/[a-z0-9]+/g) ?? []);

export const handler: Handler = async (req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  const send = (status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify(body));
  };
  if (req.method === "GET" && url.pathname === "/last") return send(200, last.get(url.searchParams.get("model") ?? "") ?? null);
  if (req.method !== "POST" || url.pathname !== "/rerank") return send(404, { error: "not found" });
  let raw = "";
  for await (const chunk of req) raw += chunk;
  const body = JSON.parse(raw) as { model?: string; query: string; documents: string[]; top_n?: number };
  const model = body.model ?? "";
  last.set(model, { authorization: req.headers.authorization ?? null, body });
  if (model.startsWith("fail-")) return send(500, { error: "model crashed" });
  if (model.startsWith("slow-")) await new Promise((r) => setTimeout(r, 1500));
  if (model.startsWith("garbage-")) return send(200, { results: [{ index: body.documents.length + 3, relevance_score: 1 }] });
  if (model.startsWith("reverse-")) {
    return send(200, { results: body.documents.map((_, index) => ({ index, relevance_score: index + 1 })).reverse() });
  }
  const q = words(body.query);
  const scored = body.documents
    .map((d, index) => {
      const w = words(d);
      const hits = [...q].filter((t) => w.has(t)).length;
      return { index, score: q.size ? hits / q.size : 0 };
    })
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, body.top_n ?? body.documents.length);
  if (model.startsWith("tei-")) return send(200, scored);
  return send(200, { results: scored.map((s) => ({ index: s.index, relevance_score: s.score })) });
};
