import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { readSse } from "../chats/chat-helpers";
import { BASE, call, expectError, expectStatus, fetchWorker } from "../helpers";
import { streamAsPage } from "./embed-helpers";

async function withEnv(path: string, init: RequestInit, overrides: Record<string, unknown>) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${BASE}${path}`, init), { ...env, ...overrides } as any, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("GET /widget.js", () => {
  it("serves the widget as cacheable JavaScript with an ETag", async () => {
    const res = await fetchWorker("/widget.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("Cache-Control")).toMatch(/^public, max-age=\d+/);
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    const etag = res.headers.get("ETag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const js = await res.text();
    // The function, serialized and called with the script element; the build helper is defined.
    expect(js).toMatch(/^\/\*! kb-chat-widget/);
    expect(js).toContain("document.currentScript");
    expect(js).toContain("var __name=");
    expect(js).toContain("attachShadow");
    expect(js.length).toBeLessThan(40_000);
    // Safe rendering and no third-party code: no HTML sinks, no eval, no remote script or style URLs.
    for (const sink of ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"]) expect(js).not.toContain(sink);
    expect(js.match(/https?:\/\/[^\s"'`)]+/g)?.filter((u) => !u.startsWith("http://www.w3.org/2000/svg")) ?? []).toEqual([]);

    const again = await fetchWorker("/widget.js", { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    // Another page's request for it (a cross-origin <script>) is fine too.
    const cross = await fetchWorker("/widget.js", { headers: { Origin: "https://shop.example.com" } });
    expect(cross.status).toBe(200);
  });
});

describe("the embed demo (development only)", () => {
  it("serves a page with the widget, whose backend mints tokens for its own origin only", async () => {
    const page = await fetchWorker("/embed/demo");
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toMatch(/text\/html/);
    expect(page.headers.get("Content-Security-Policy")).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<script src="/widget.js" data-token-url="/embed/demo/token"');

    expect((await fetchWorker("/embed/demo/token", { method: "POST", headers: { Origin: "https://evil.example.com" } })).status).toBe(403);
    const res = await fetchWorker("/embed/demo/token", { method: "POST", headers: { Origin: BASE } });
    expect(res.status).toBe(201);
    const cookie = /kb_embed_demo=[^;]+/.exec(res.headers.get("Set-Cookie") ?? "")![0];
    const t = (await res.json()) as any;
    expect(t.token).toMatch(/^kbe_/);
    expect(t.allowed_origins).toEqual([BASE]);
    expect(t.external_subject_id).toMatch(/^demo-visitor-/);
    // The same browser is the same end user (its chat survives reloads); the demo is provisioned once.
    const again = (await (await fetchWorker("/embed/demo/token", { method: "POST", headers: { Origin: BASE, Cookie: cookie } })).json()) as any;
    expect(again.external_subject_id).toBe(t.external_subject_id);
    expect(again.knowledge_base_id).toBe(t.knowledge_base_id);

    // The demo knowledge base answers once its handbook is processed.
    for (let i = 0; i < 100; i++) {
      const row = await env.DB.prepare("SELECT status FROM documents WHERE knowledge_base_id = ?").bind(t.knowledge_base_id).first<{ status: string }>();
      if (row?.status === "processed") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const id = crypto.randomUUID();
    expectStatus(
      await call("/chats", { key: t.token, headers: { Origin: BASE }, body: { id, tenant_id: t.tenant_id, knowledge_base_id: t.knowledge_base_id, model: "local-extractive" } }),
      201,
    );
    const events = await readSse(await streamAsPage(t.token, id, { content: "How many days to request a refund?", model: "local-extractive", agent_mode: "quick" }, BASE));
    expect(events.find((e) => e.data.type === "final_response" && e.data.isComplete)?.data.content).toMatch(/30 days/);
    // Only from the demo's own origin.
    expectError(await call(`/chats/${id}/messages`, { key: t.token, headers: { Origin: "https://evil.example.com" } }), 403);
  });

  it("answers 404 in production", async () => {
    for (const [path, method] of [["/embed/demo", "GET"], ["/embed/demo/token", "POST"]]) {
      const res = await withEnv(path, { method }, { ENVIRONMENT: "production" });
      expect(res.status).toBe(404);
    }
    // The widget itself is served everywhere.
    expect((await withEnv("/widget.js", {}, { ENVIRONMENT: "production" })).status).toBe(200);
  });
});
