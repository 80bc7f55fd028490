import type { Handler } from "./index";

/**
 * A SearXNG-compatible JSON search endpoint: GET /search?q=...&format=json.
 * A query starting with `slowsearch` waits 20 s before answering (and notes when
 * its client went away); one starting with `failsearch` answers HTTP 500.
 * GET /__started?q=<text> and /__aborted?q=<text> tell whether a slow request for <text> arrived, and
 * whether its client abandoned it.
 */
const abandoned = new Set<string>();
const started = new Set<string>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const handler: Handler = async (req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  if (url.pathname === "/__aborted" || url.pathname === "/__started") {
    const set = url.pathname === "/__aborted" ? abandoned : started;
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ yes: [...set].some((q) => q.includes(url.searchParams.get("q") ?? "")) }));
    return;
  }
  if (url.pathname !== "/search" || url.searchParams.get("format") !== "json") {
    res.writeHead(404, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: "not found" }));
    return;
  }
  const q = url.searchParams.get("q") ?? "";
  if (q.startsWith("failsearch")) {
    res.writeHead(500, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ error: "search backend down" }));
    return;
  }
  if (q.startsWith("slowsearch")) {
    started.add(q);
    let gone = false;
    const onGone = () => {
      if (!res.writableEnded && !gone) {
        gone = true;
        abandoned.add(q);
      }
    };
    res.on("close", onGone);
    req.socket.on("close", onGone);
    for (let i = 0; i < 200 && !gone; i++) await sleep(100);
    if (gone) return;
  }
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
