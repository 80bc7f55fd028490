import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium, freePort } from "./browser-helpers.ts";
import { api, setUpKnowledgeBase, startDevServer, uploadAndWait, type DevServer } from "../bench/lib.ts";

/**
 * End to end in a real browser: a page on ANOTHER origin streams an answer from
 * the local server (wrangler dev) with an API key, rendering partial answers as
 * they arrive and the citations at the end. Chromium comes from Debian
 * (`apt-get install chromium`), installed here when missing and possible.
 */
const PAGE = (apiBase: string, chatId: string, key: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>Customer app</title></head>
<body>
<h1>Ask the handbook</h1>
<div id="answer"></div><ol id="sources"></ol><p id="status">waiting</p>
<script>
(async () => {
  const status = document.getElementById("status");
  const answer = document.getElementById("answer");
  let partialRenders = 0, text = "", buf = "";
  try {
    const res = await fetch(${JSON.stringify(apiBase)} + "/api/v1/chats/${chatId}/messages/stream", {
      method: "POST",
      headers: { "Authorization": "Bearer ${key}", "Content-Type": "application/json" },
      body: JSON.stringify({ content: "How many days do customers have to request a refund?", model: "local-extractive", agent_mode: "quick" }),
    });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf("\\n\\n")) >= 0) {
        const block = buf.slice(0, i); buf = buf.slice(i + 2);
        const line = block.split("\\n").find((l) => l.startsWith("data:"));
        if (!line) continue;
        const e = JSON.parse(line.slice(5));
        if (e.type === "sources") {
          for (const s of e.sources) {
            const li = document.createElement("li");
            li.textContent = "[" + s.index + "] " + s.filename;
            document.getElementById("sources").appendChild(li);
          }
        } else if (e.type === "final_response" && !e.isComplete) {
          text += e.content; answer.textContent = text; partialRenders++;
        } else if (e.type === "final_response") {
          answer.textContent = e.content;
        } else if (e.type === "done") {
          status.dataset.partials = String(partialRenders);
          status.textContent = "done";
        } else if (e.type === "error") {
          status.textContent = "error: " + e.message;
        }
      }
    }
  } catch (err) {
    status.textContent = "error: " + err;
  }
})();
</script></body></html>`;

const chromiumPath = findChromium();
if (!chromiumPath) console.warn("browser test skipped: no Chromium (install Debian's `chromium` or set CHROMIUM_PATH)");

describe.skipIf(!chromiumPath)("a browser on another origin", () => {
  let server: DevServer;
  let page: http.Server;
  let browser: Browser;

  beforeAll(async () => {
    server = await startDevServer({ port: await freePort(), vars: { LOCAL_MODEL_TOKEN_DELAY_MS: "15" } });
  });

  afterAll(async () => {
    await browser?.close();
    page?.close();
    await server?.stop();
  });

  it("streams an answer with an API key and shows the citations", async () => {
    const { cookie, org, kb } = await setUpKnowledgeBase(server.base, "browser");
    await uploadAndWait(server.base, { cookie }, kb, "handbook.md", "# Refunds\n\nCustomers can request a refund within 30 days of purchase. Refunds are paid to the original payment method.");
    const key = (await api(server.base, `/environments/${org.default_environment_id}/api-keys`, { cookie, body: { name: "web", scopes: ["query:rag"] } })).body.key;
    const chatId = crypto.randomUUID();
    await api(server.base, "/chats", { key, body: { id: chatId, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive" } });

    page = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(PAGE(server.base, chatId, key));
    });
    await new Promise<void>((r) => page.listen(0, "127.0.0.1", r));
    // localhost vs 127.0.0.1: a different origin from the API.
    const pageUrl = `http://localhost:${(page.address() as AddressInfo).port}/`;

    browser = await chromium.launch({
      executablePath: chromiumPath!,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    // Runs in the page (a string, so this Node test needs no DOM types).
    await tab.waitForFunction(`/done|error/.test(document.getElementById("status").textContent)`, null, { timeout: 30_000 });
    expect(await tab.textContent("#status")).toBe("done");
    expect(await tab.textContent("#answer")).toMatch(/within 30 days of purchase \[1\]/);
    expect(await tab.textContent("#sources")).toContain("[1] handbook.md");
    // The answer was rendered piece by piece before the stream finished.
    expect(Number(await tab.getAttribute("#status", "data-partials"))).toBeGreaterThan(3);
  });
});
