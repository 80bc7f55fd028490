import type { Handler } from "./index";

/** A SearXNG-compatible JSON search endpoint: GET /search?q=...&format=json. */
export const handler: Handler = (req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  if (url.pathname !== "/search" || url.searchParams.get("format") !== "json") {
    res.writeHead(404, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: "not found" }));
    return;
  }
  const q = url.searchParams.get("q") ?? "";
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(
    JSON.stringify({
      query: q,
      results: [
        { title: `Web result about ${q}`, url: "https://example.org/web-result", content: `The web says something about ${q}: it is well documented online.`, score: 2 },
        { title: "Second result", url: "https://example.net/second", content: "Another page from the web.", score: 1 },
      ],
    }),
  );
};
