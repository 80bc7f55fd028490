import { readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium, freePort } from "./browser-helpers.ts";
import { root } from "../bench/lib.ts";

/**
 * The widget's browser module (src/widget/, bundled into dist/assets/widget.js by `npm run build:assets`) on
 * its own, in Chromium, against a small Node server that plays the page's token backend and the service's API
 * (no Worker): its settings from data-* attributes, one widget however often the tag is included, a new token
 * when the API answers 401, an SSE stream cut at awkward places (CRLF, pings, chunks across writes), citations
 * that open their passage, refusals in the API's own words, the keyboard, and a tag without a token URL.
 */
const chromiumPath = findChromium();
const SHADOW = `document.querySelector("[data-kb-chat-widget]").shadowRoot`;
const lastBot = `[...${SHADOW}.querySelectorAll(".msg.bot")].at(-1)`;

function sse(res: http.ServerResponse, events: string[]) {
  res.writeHead(200, { "Content-Type": "text/event-stream" });
  // CRLF line ends, a ping, and an event split across two writes.
  const body = events.join("").replace(/\n/g, "\r\n");
  const cut = Math.floor(body.length / 2);
  res.write(": comment\r\nevent: ping\r\ndata: {}\r\n\r\n");
  res.write(body.slice(0, cut));
  setTimeout(() => res.end(body.slice(cut)), 30);
}

const event = (e: object) => `data: ${JSON.stringify(e)}\n\n`;

describe.skipIf(!chromiumPath)("the widget module in a browser", () => {
  let site: http.Server;
  let base: string;
  let browser: Browser;
  const seen = { tokens: 0, chats: [] as Record<string, unknown>[], auth: [] as string[] };

  beforeAll(async () => {
    const js = readFileSync(path.join(root, "dist/assets/widget.js"), "utf8");
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    site = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", base);
      const read = () => new Promise<string>((r) => { let b = ""; req.on("data", (c) => (b += c)); req.on("end", () => r(b)); });
      if (url.pathname === "/widget.js") return res.writeHead(200, { "Content-Type": "text/javascript" }).end(js);
      if (url.pathname === "/") {
        // The tag twice: still one widget.
        const tag = `<script src="/widget.js" data-token-url="/token" data-title="Module test" data-position="left" data-open="true" data-model="m-1" data-agent-mode="deep" defer></script>`;
        return res.writeHead(200, { "Content-Type": "text/html" }).end(`<!doctype html><html lang="en"><title>t</title><body><h1>Shop</h1>${tag}${tag}</body></html>`);
      }
      if (url.pathname === "/down") {
        return res.writeHead(200, { "Content-Type": "text/html" }).end(`<!doctype html><html lang="en"><title>t</title><script src="/widget.js" data-token-url="/token-down" data-open="true"></script></html>`);
      }
      if (url.pathname === "/token-down") return res.writeHead(503).end();
      if (url.pathname === "/bare") return res.writeHead(200, { "Content-Type": "text/html" }).end(`<!doctype html><title>t</title><script src="/widget.js"></script>`);
      if (url.pathname === "/token") {
        seen.tokens++;
        const body = { token: `kbe_t${seen.tokens}`, expires_at: new Date(Date.now() + 600_000).toISOString(), tenant_id: "ten_1", knowledge_base_id: "kb_1" };
        return res.writeHead(201, { "Content-Type": "application/json" }).end(JSON.stringify(body));
      }
      if (!url.pathname.startsWith("/api/v1/")) return res.writeHead(404).end();
      const auth = String(req.headers.authorization ?? "");
      seen.auth.push(auth);
      // The first token is refused as expired: the widget fetches another and tries once more.
      if (auth === "Bearer kbe_t1") return res.writeHead(401, { "Content-Type": "application/json" }).end(JSON.stringify({ error: { code: "unauthorized", message: "expired" } }));
      if (req.method === "POST" && url.pathname === "/api/v1/chats") {
        return void read().then((b) => (seen.chats.push(JSON.parse(b)), res.writeHead(201, { "Content-Type": "application/json" }).end(b)));
      }
      if (url.pathname.endsWith("/messages/stream")) {
        return void read().then((b) => {
          const q = JSON.parse(b).content as string;
          if (q.includes("credits")) {
            return res.writeHead(402, { "Content-Type": "application/json" }).end(JSON.stringify({ error: { code: "insufficient_credits", message: "The tenant has no credits left." } }));
          }
          sse(res, [
            event({ type: "sources", sources: [{ index: 1, filename: "guide.md", text: "Refunds within 30 days.", page: null, url: null }] }),
            event({ type: "final_response", content: "Refunds within ", isComplete: false }),
            event({ type: "final_response", content: "30 days [1].", isComplete: false }),
            event({ type: "done", status: "complete" }),
          ]);
        });
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => site.listen(port, "127.0.0.1", r));
    browser = await chromium.launch({ executablePath: chromiumPath!, args: ["--no-sandbox"] });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    site?.close();
  });

  const evaluate = (tab: Page, expr: string) => tab.evaluate(expr);

  it("reads its settings, streams a cited answer with a fresh token, and shows refusals in the API's words", async () => {
    const tab = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const errors: string[] = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    await tab.goto(`${base}/`);
    await tab.waitForFunction(`${SHADOW} && !${SHADOW}.querySelector("#kbw-panel").hidden`);
    expect(await evaluate(tab, `document.querySelectorAll("[data-kb-chat-widget]").length`)).toBe(1);
    expect(await evaluate(tab, `getComputedStyle(${SHADOW}.querySelector(".wrap")).left`)).toBe("20px");
    expect(await evaluate(tab, `${SHADOW}.activeElement.id`)).toBe("kbw-input");
    expect(await evaluate(tab, `typeof window.KbChatWidget.open`)).toBe("function");

    await tab.locator("#kbw-input").fill("How long for refunds?");
    await tab.locator("#kbw-input").press("Enter");
    await tab.waitForFunction(`${lastBot}.getAttribute("aria-busy") === "false"`);
    expect(await evaluate(tab, `${lastBot}.querySelector(".text").textContent`)).toBe("Refunds within 30 days [1].");
    expect(seen.chats[0]).toMatchObject({ tenant_id: "ten_1", knowledge_base_id: "kb_1", model: "m-1", agent_mode: "deep" });
    expect(seen.tokens).toBe(2);
    expect(seen.auth.slice(0, 2)).toEqual(["Bearer kbe_t1", "Bearer kbe_t2"]);

    // The citation opens its passage and moves focus to it.
    await tab.locator("button.cite").click();
    expect(await evaluate(tab, `${lastBot}.querySelector("details").open`)).toBe(true);
    expect(await evaluate(tab, `${SHADOW}.activeElement.textContent`)).toBe("[1] guide.md");

    await tab.locator("#kbw-input").fill("And with no credits?");
    await tab.locator("#kbw-input").press("Enter");
    await tab.waitForFunction(`${lastBot}.classList.contains("error")`);
    expect(await evaluate(tab, `${lastBot}.textContent`)).toBe("The tenant has no credits left.");

    // Escape closes the panel and gives focus back to the launcher.
    await tab.keyboard.press("Escape");
    expect(await evaluate(tab, `${SHADOW}.querySelector("#kbw-panel").hidden`)).toBe(true);
    expect(await evaluate(tab, `${SHADOW}.activeElement.className`)).toBe("launcher");
    expect(errors).toEqual([]);
    await tab.close();
  });

  it("says in words, and to screen readers, when its page's token endpoint fails", async () => {
    const tab = await browser.newPage();
    await tab.goto(`${base}/down`);
    await tab.waitForFunction(`${SHADOW} && ${SHADOW}.querySelector(".msg.bot.error")`);
    expect(await evaluate(tab, `${lastBot}.textContent`)).toBe("The chat is unavailable (token endpoint answered 503)");
    await tab.waitForFunction(`${SHADOW}.querySelector("[role=status]").textContent !== ""`);
    expect(await evaluate(tab, `${SHADOW}.querySelector("[role=status]").textContent`)).toBe("The chat is unavailable (token endpoint answered 503)");
    await tab.close();
  });

  it("does nothing but say why when the tag has no token URL", async () => {
    const tab = await browser.newPage();
    const logs: string[] = [];
    tab.on("console", (m) => logs.push(m.text()));
    await tab.goto(`${base}/bare`);
    await tab.waitForLoadState("load");
    expect(await evaluate(tab, `document.querySelector("[data-kb-chat-widget]")`)).toBeNull();
    expect(logs).toContain("[kb-chat-widget] data-token-url is required");
    await tab.close();
  });
});
