import { describe, expect, it } from "vitest";
import schema from "../../src/console/api/schema.d.ts?raw";
import { fetchWorker } from "../helpers";

/**
 * The console's files come from the Worker's static assets (dist/assets/console, built by `npm run
 * build:assets`, which `npm test` runs first): its routes, the fallback for client-side routes, the
 * redirect of browsers from `/`, and the generated API types matching the document the Worker serves.
 */
describe("the console", () => {
  it("serves the app under /console/, with client-side routes falling back to index.html", async () => {
    const bare = await fetchWorker("/console", { redirect: "manual" });
    expect(bare.status).toBe(308);
    expect(bare.headers.get("Location")).toBe("/console/");
    for (const path of ["/console/", "/console/knowledge-bases", "/console/kb/kb_123/playground"]) {
      const res = await fetchWorker(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("Content-Type")).toContain("text/html");
      const html = await res.text();
      expect(html).toContain('<div id="root">');
      // Everything from this origin: no CDN, no network fonts.
      expect(html).not.toMatch(/https?:\/\/(?!localhost)/);
      const csp = res.headers.get("Content-Security-Policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      // Uploads go to the signed URLs on PUBLIC_BASE_URL (wrangler.toml: http://localhost:8787).
      expect(csp).toMatch(/connect-src 'self' http:\/\/localhost:8787(;|$)/);
      expect(res.headers.get("Cache-Control")).toBe("no-cache");
    }
  });

  it("serves its built scripts (cached for good) and answers 404 for a missing file", async () => {
    const html = await (await fetchWorker("/console/")).text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeTruthy();
    const js = await fetchWorker(script!);
    expect(js.status).toBe(200);
    expect(js.headers.get("Content-Type")).toContain("javascript");
    expect(js.headers.get("Cache-Control")).toContain("immutable");
    const missing = await fetchWorker("/console/assets/missing-0000.js");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("Content-Type")).toContain("application/json");
  });

  it("sends browsers from / to the console and keeps the JSON index for API clients", async () => {
    const browser = await fetchWorker("/", { headers: { Accept: "text/html,application/xhtml+xml,*/*;q=0.8" }, redirect: "manual" });
    expect(browser.status).toBe(302);
    expect(browser.headers.get("Location")).toBe("/console/");
    const client = await fetchWorker("/");
    expect(client.status).toBe(200);
    const body = (await client.json()) as Record<string, string>;
    expect(body).toMatchObject({ api: "/api/v1", openapi: "/openapi.json", console: "/console/" });
    const json = await fetchWorker("/", { headers: { Accept: "application/json" } });
    expect(json.status).toBe(200);
  });

  it("has API types generated from the document the Worker serves (else: npm run console:api)", async () => {
    const doc = (await (await fetchWorker("/openapi.json")).json()) as Record<string, unknown>;
    const { servers: _servers, ...rest } = doc;
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(rest)));
    const hash = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    const recorded = /^\/\/ openapi sha256: ([0-9a-f]{64})$/m.exec(schema)?.[1];
    expect(recorded, "src/console/api/schema.d.ts is stale: run `npm run console:api`").toBe(hash);
  });
});
