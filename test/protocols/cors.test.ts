import { describe, expect, it } from "vitest";
import { API, fetchWorker } from "../helpers";

/**
 * CORS for the protocol clients that run in browsers (API-DECISIONS wave 3, "Protocols at the edge of
 * the browser"): the MCP and A2A SDKs send their own headers on every call and read WWW-Authenticate
 * on a 401; the preflight must allow the former and responses must expose the latter.
 */
const SITE = "https://chat-ui.example.org";
const PROTOCOL_HEADERS = ["Mcp-Protocol-Version", "Mcp-Session-Id", "A2A-Version", "Last-Event-ID", "Authorization", "Content-Type"];
const EXPOSED = ["WWW-Authenticate", "Mcp-Session-Id", "X-Request-Id", "Retry-After"];

const list = (v: string | null) => (v ?? "").split(",").map((s) => s.trim().toLowerCase());

describe("CORS for browser protocol clients", () => {
  it("the preflight allows the MCP, A2A and SSE headers (and the openai package's) from any origin", async () => {
    for (const path of ["/mcp", "/agents/agt_x/a2a", "/openai/chat/completions", "/chats/c1/ui-stream"]) {
      const pre = await fetchWorker(`${API}${path}`, {
        method: "OPTIONS",
        headers: {
          Origin: SITE,
          "Access-Control-Request-Method": "POST",
          "Access-Control-Request-Headers": "authorization,content-type,mcp-protocol-version,mcp-session-id,a2a-version,last-event-id,x-stainless-os",
        },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get("Access-Control-Allow-Origin")).toBe("*");
      const allowed = list(pre.headers.get("Access-Control-Allow-Headers"));
      for (const h of [...PROTOCOL_HEADERS, "X-Stainless-OS", "X-Stainless-Retry-Count"]) expect(allowed, h).toContain(h.toLowerCase());
      expect(list(pre.headers.get("Access-Control-Expose-Headers"))).toEqual(expect.arrayContaining(EXPOSED.map((h) => h.toLowerCase())));
    }
  });

  it("a 401 from another origin is readable, WWW-Authenticate included", async () => {
    const r = await fetchWorker(`${API}/mcp`, {
      method: "POST",
      headers: { Origin: SITE, "Content-Type": "application/json", "Mcp-Protocol-Version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
    });
    expect(r.status).toBe(401);
    expect(r.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(r.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
    expect(list(r.headers.get("Access-Control-Expose-Headers"))).toEqual(expect.arrayContaining(EXPOSED.map((h) => h.toLowerCase())));
  });
});
