import http from "node:http";
import type { AddressInfo } from "node:net";
import { build } from "esbuild";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium, freePort } from "./browser-helpers.ts";
import { api, root, setUpKnowledgeBase, startDevServer, uploadAndWait, type DevServer } from "../bench/lib.ts";

/**
 * The protocols' own browser SDKs, from a page on ANOTHER origin, against the local server (wrangler
 * dev): the MCP SDK's client (Streamable HTTP), the A2A SDK 1.3 client and the A2A 0.3 client
 * (`A2AClient.fromCardUrl`), bundled for the browser with esbuild as an application would. Without
 * the CORS of API-DECISIONS wave 3 ("Protocols at the edge of the browser") the preflights fail
 * before the first request; the page also reads the 401's WWW-Authenticate (an exposed header).
 */

/** The SDKs as a browser module (what an application's bundler makes of them). */
async function sdkBundle(): Promise<string> {
  const out = await build({
    stdin: {
      contents: [
        'export { Client } from "@modelcontextprotocol/sdk/client/index.js";',
        'export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";',
        'export { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";',
        'export { A2AClient } from "a2a-sdk-03/client";',
      ].join("\n"),
      resolveDir: root,
      loader: "js",
    },
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return out.outputFiles[0]!.text;
}

const PAGE = (apiBase: string, key: string, agentId: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Protocols</title></head>
<body><h1>Protocol clients</h1><pre id="out"></pre><p id="status">waiting</p>
<script type="module">
import * as sdk from "/sdk.js";
const API = ${JSON.stringify(apiBase)}, KEY = ${JSON.stringify(key)};
const CARD = API + "/api/v1/agents/${agentId}/a2a/.well-known/agent-card.json";
const out = {};
const step = (name) => { document.getElementById("status").textContent = name; };
try {
  step("mcp");
  const mcp = new sdk.Client({ name: "page", version: "1.0.0" });
  await mcp.connect(new sdk.StreamableHTTPClientTransport(new URL(API + "/api/v1/mcp"), { requestInit: { headers: { Authorization: "Bearer " + KEY } } }));
  out.tools = (await mcp.listTools()).tools.map((t) => t.name).sort();
  out.search = (await mcp.callTool({ name: "search", arguments: { query: "How long do refunds take?" } })).content[0].text;
  await mcp.close();

  step("challenge");
  const anon = await fetch(API + "/api/v1/mcp", { method: "POST", headers: { "Content-Type": "application/json", "Mcp-Protocol-Version": "2025-06-18" }, body: "{}" });
  out.challenge = anon.status + " " + anon.headers.get("WWW-Authenticate");

  const keyed = (input, init) => { const r = new Request(input, init); r.headers.set("Authorization", "Bearer " + KEY); return fetch(r); };
  step("a2a 1.x");
  const factory = new sdk.ClientFactory(sdk.ClientFactoryOptions.createFrom(sdk.ClientFactoryOptions.default, {
    transports: [new sdk.JsonRpcTransportFactory({ fetchImpl: keyed })],
    cardResolver: new sdk.DefaultAgentCardResolver({ fetchImpl: keyed }),
  }));
  const a2a = await factory.createFromUrl(CARD, "");
  const task = await a2a.sendMessage({ tenant: "", configuration: undefined, metadata: undefined, message: {
    messageId: crypto.randomUUID(), contextId: "", taskId: "", role: 1, metadata: undefined, extensions: [], referenceTaskIds: [],
    parts: [{ content: { $case: "text", value: "How long do refunds take?" }, metadata: undefined, filename: "", mediaType: "text/plain" }] } });
  out.a2a = task.artifacts.map((a) => a.parts.map((p) => p.content.value).join("")).join("");

  step("a2a 0.3");
  const legacy = await sdk.A2AClient.fromCardUrl(CARD, { fetchImpl: keyed });
  const sent = await legacy.sendMessage({ message: { kind: "message", role: "user", messageId: crypto.randomUUID(), parts: [{ kind: "text", text: "How long do refunds take?" }] } });
  out.a2a03 = sent.error ? "error " + JSON.stringify(sent.error) : sent.result.status.state + " " + JSON.stringify(sent.result.artifacts);
  step("done");
} catch (err) {
  step("error: " + (err && err.message ? err.message : err));
}
document.getElementById("out").textContent = JSON.stringify(out);
</script></body></html>`;

const chromiumPath = findChromium();
if (!chromiumPath) console.warn("browser test skipped: no Chromium (install Debian's `chromium` or set CHROMIUM_PATH)");

describe.skipIf(!chromiumPath)("protocol SDKs in a browser on another origin", () => {
  let server: DevServer;
  let page: http.Server;
  let browser: Browser;

  beforeAll(async () => {
    server = await startDevServer({ port: await freePort() });
  });

  afterAll(async () => {
    await browser?.close();
    page?.close();
    await server?.stop();
  });

  it("the MCP SDK and the A2A SDKs (1.3 and 0.3) work from the page with an API key", async () => {
    const { cookie, org, kb } = await setUpKnowledgeBase(server.base, "protocols");
    await uploadAndWait(server.base, { cookie }, kb, "handbook.md", "# Refunds\n\nRefunds are paid to the original payment method within 5 business days.");
    const key = (await api(server.base, `/environments/${org.default_environment_id}/api-keys`, { cookie, body: { name: "web", scopes: ["query:rag", "documents:read"] } })).body.key;
    const agent = (
      await api(server.base, "/agents", { cookie, body: { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, name: "Refunds", goal: "Answer refund questions", model: "local-extractive", agent_mode: "quick" } })
    ).body;

    const bundle = await sdkBundle();
    page = http.createServer((req, res) => {
      if (req.url === "/sdk.js") {
        res.writeHead(200, { "Content-Type": "text/javascript; charset=utf-8" });
        return res.end(bundle);
      }
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(PAGE(server.base, key, agent.id));
    });
    await new Promise<void>((r) => page.listen(0, "127.0.0.1", r));
    // localhost vs 127.0.0.1: a different origin from the API.
    const pageUrl = `http://localhost:${(page.address() as AddressInfo).port}/`;

    browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
    const tab = await (await browser.newContext()).newPage();
    await tab.goto(pageUrl);
    await tab.waitForFunction(`/^(done|error)/.test(document.getElementById("status").textContent)`, null, { timeout: 60_000 });
    const status = await tab.textContent("#status");
    const out = JSON.parse((await tab.textContent("#out")) || "{}");
    expect(status, JSON.stringify(out)).toBe("done");
    expect(out.tools).toEqual(["ask", "list_knowledge_bases", "search"]);
    expect(out.search).toMatch(/5 business days/);
    expect(out.challenge).toMatch(/^401 Bearer/);
    expect(out.a2a).toMatch(/5 business days/);
    expect(out.a2a03).toMatch(/^completed .*5 business days/);
  });
});
