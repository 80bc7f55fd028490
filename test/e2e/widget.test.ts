import { mkdirSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import vm from "node:vm";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium, freePort } from "./browser-helpers.ts";
import { api, root, setUpKnowledgeBase, startDevServer, uploadAndWait, type DevServer } from "../bench/lib.ts";

/**
 * The embeddable widget end to end, in a real browser against `wrangler dev`: a customer's site on
 * ANOTHER origin (a small Node server started here) serves a page with the widget's script tag and a
 * `/kb-token` backend that mints embed tokens with its API key. The widget opens, streams an answer
 * with citations, keeps the conversation across a reload and can stop an answer; the same site on an
 * origin that is not on the token's list is refused, and a token cannot read documents or tenants.
 * Screenshots of the open widget are written to test/.tmp/embed/ (printed at the end).
 */
const SHOTS = path.join(root, "test/.tmp/embed");
const chromiumPath = findChromium();
if (!chromiumPath) console.warn("widget browser test skipped: no Chromium (install Debian's `chromium` or set CHROMIUM_PATH)");

// Read inside the page (strings, so this Node test needs no DOM types).
const SHADOW = `document.querySelector("[data-kb-chat-widget]").shadowRoot`;
const lastBot = `[...${SHADOW}.querySelectorAll(".msg.bot")].at(-1)`;

describe.skipIf(!chromiumPath)("the chat widget on a customer's site", () => {
  let server: DevServer;
  let site: http.Server;
  let browser: Browser;
  let sitePort: number;
  let kb: { id: string; tenant_id: string };
  let key: string;
  const mints: string[] = [];
  const shots: string[] = [];

  beforeAll(async () => {
    // Paced partial answers, so streaming and Stop are observable.
    server = await startDevServer({ port: await freePort(), vars: { LOCAL_MODEL_TOKEN_DELAY_MS: "60" } });
    const setup = await setUpKnowledgeBase(server.base, "widget");
    kb = setup.kb;
    await uploadAndWait(
      server.base,
      { cookie: setup.cookie },
      kb,
      "handbook.md",
      "# Refunds\n\nCustomers can request a refund within 30 days of purchase. Refunds are paid to the original payment method within 5 business days.\n\n" +
        "# Shipping\n\nOrders ship within 2 business days from our warehouse in Leeds. Express shipping costs 15 euros and arrives the next day. " +
        "Standard shipping is free for orders above 50 euros and otherwise costs 4 euros; parcels are tracked and insured, and a signature is " +
        "required on delivery for orders above 200 euros. International shipping takes five to ten business days depending on the destination.",
    );
    key = (await api(server.base, `/environments/${setup.envId}/api-keys`, { cookie: setup.cookie, body: { name: "shop backend", scopes: ["query:rag"] } })).body.key;

    // The customer's site. Its backend keeps the API key; the page only ever sees short-lived embed tokens,
    // valid for the site's real origin (http://localhost:PORT) only.
    sitePort = await freePort();
    site = http.createServer(async (req, res) => {
      const url = new URL(req.url ?? "/", "http://site");
      if (req.method === "POST" && url.pathname === "/kb-token") {
        const r = await fetch(`${server.base}/api/v1/embed/tokens`, {
          method: "POST",
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
          body: JSON.stringify({
            tenant_id: kb.tenant_id,
            knowledge_base_id: kb.id,
            external_subject_id: "customer-42",
            allowed_origins: [`http://localhost:${sitePort}`],
            ttl_seconds: Number(url.searchParams.get("ttl") ?? 600),
          }),
        });
        const text = await r.text();
        mints.push(`${req.headers.host} -> ${r.status}`);
        res.writeHead(r.status, { "Content-Type": "application/json" });
        res.end(text);
        return;
      }
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title></head>
<body style="font-family:sans-serif;margin:40px"><h1>Acme shop</h1><p>Questions about refunds or shipping? Ask our assistant.</p>
<script src="${server.base}/widget.js" data-token-url="/kb-token${url.searchParams.has("ttl") ? `?ttl=${url.searchParams.get("ttl")}` : ""}" data-title="Acme help" data-primary-color="#7c3aed" defer></script>
</body></html>`);
    });
    await new Promise<void>((r) => site.listen(sitePort, "127.0.0.1", r));
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: chromiumPath!,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  });

  afterAll(async () => {
    await browser?.close();
    site?.close();
    await server?.stop();
    if (shots.length) console.log(`widget screenshots:\n  ${shots.join("\n  ")}`);
  });

  const shot = async (tab: Page, name: string) => {
    const file = path.join(SHOTS, name);
    await tab.screenshot({ path: file });
    shots.push(file);
  };
  const text = (tab: Page, expr: string) => tab.evaluate(expr) as Promise<string>;
  const users = `${SHADOW}.querySelectorAll(".msg.user").length`;
  /**
   * Sends a question and waits until it is shown: the widget adds the question and, in the same task, its answer
   * bubble, so from then on the last bot message is this answer (never the welcome or the previous answer).
   */
  const ask = async (tab: Page, question: string) => {
    const before = Number(await tab.evaluate(users));
    await tab.locator("#kbw-input").fill(question);
    await tab.locator("#kbw-input").press("Enter");
    await tab.waitForFunction(`${users} > ${before}`, null, { timeout: 15_000 });
  };

  it("is a valid, self-contained script", async () => {
    const js = await (await fetch(`${server.base}/widget.js`)).text();
    expect(() => new vm.Script(js)).not.toThrow();
  });

  it("opens, streams an answer with citations and their passages, survives a reload, and stops an answer", async () => {
    const tab = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    const errors: string[] = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    await tab.goto(`http://localhost:${sitePort}/`);

    // Keyboard: the launcher is labelled; opening it moves focus into the panel.
    const launcher = tab.locator("button.launcher");
    expect(await launcher.getAttribute("aria-label")).toBe("Open chat: Acme help");
    await launcher.click();
    expect(await launcher.getAttribute("aria-expanded")).toBe("true");
    expect(await text(tab, `${SHADOW}.activeElement && ${SHADOW}.activeElement.id`)).toBe("kbw-input");
    expect(await tab.locator("#kbw-panel").getAttribute("role")).toBe("dialog");

    // Record every state of the answer while it is still streaming (aria-busy), to see partial text.
    await tab.evaluate(`(() => {
      window.__partials = new Set();
      new MutationObserver(() => {
        const b = ${lastBot};
        if (b && b.getAttribute("aria-busy") === "true") window.__partials.add(b.querySelector(".text").textContent);
      }).observe(${SHADOW}, { subtree: true, childList: true, characterData: true, attributes: true });
    })()`);
    await ask(tab, "How many days do customers have to request a refund?");
    await tab.waitForFunction(`${lastBot}.getAttribute("aria-busy") === "false"`, null, { timeout: 30_000 });
    const answer = await text(tab, `${lastBot}.querySelector(".text").textContent`);
    expect(answer).toMatch(/within 30 days of purchase \[1\]/);
    expect(Number(await tab.evaluate("window.__partials.size"))).toBeGreaterThan(3);
    expect(await text(tab, `${SHADOW}.querySelector('[role="log"]').getAttribute("aria-live")`)).toBe("polite");

    // The citation is a button that opens its passage.
    const cite = tab.locator(".msg.bot button.cite").first();
    expect(await cite.textContent()).toBe("[1]");
    expect(await cite.getAttribute("aria-label")).toBe("Source 1: handbook.md");
    await cite.click();
    const details = tab.locator(".msg.bot details").first();
    expect(await details.getAttribute("open")).toBe("");
    expect(await details.locator("summary").textContent()).toBe("[1] handbook.md");
    expect(await details.locator("p").textContent()).toContain("refund within 30 days");
    await shot(tab, "widget-answer.png");

    // Reload: the same conversation comes back from GET /chats/:id/messages.
    await tab.reload();
    await tab.locator("button.launcher").click();
    await tab.waitForFunction(`${SHADOW}.querySelectorAll(".msg.user").length === 1`, null, { timeout: 15_000 });
    expect(await text(tab, `${SHADOW}.querySelector(".msg.user").textContent`)).toBe("How many days do customers have to request a refund?");
    expect(await text(tab, `${lastBot}.querySelector(".text").textContent`)).toMatch(/30 days/);
    expect(await tab.locator(".msg.bot details").count()).toBeGreaterThan(0);
    await shot(tab, "widget-reloaded.png");

    // Stop: the answer ends early and the server keeps it as partial.
    await ask(tab, "How much does shipping cost, how long does it take, and is it insured?");
    await tab.waitForFunction(`${lastBot}.getAttribute("aria-busy") === "true" && ${lastBot}.querySelector(".text").textContent.length > 5`, null, { timeout: 15_000 });
    const stopBtn = tab.locator("button.stop");
    expect(await stopBtn.isVisible()).toBe(true);
    await stopBtn.click();
    await tab.waitForFunction(`${lastBot}.getAttribute("aria-busy") === "false"`, null, { timeout: 15_000 });
    expect(await text(tab, `${lastBot}.textContent`)).toContain("Stopped.");
    await shot(tab, "widget-stopped.png");
    const chatId = await text(tab, `Object.entries(localStorage).find(([k]) => k.startsWith("kb-chat-widget:"))[1]`);
    const stored = (await api(server.base, `/chats/${chatId}/messages?external_subject_id=customer-42`, { key })).body;
    expect(stored.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(stored.messages[3].metadata.status).toBe("partial");

    // Escape closes the panel and gives focus back to the launcher.
    await tab.locator("#kbw-input").press("Escape");
    expect(await tab.locator("#kbw-panel").isHidden()).toBe(true);
    expect(await text(tab, `${SHADOW}.activeElement && ${SHADOW}.activeElement.className`)).toBe("launcher");
    expect(errors).toEqual([]);
    await tab.close();
  });

  it("refreshes its token before it expires", async () => {
    const context = await browser.newContext();
    const tab = await context.newPage();
    await tab.clock.install();
    const before = mints.length;
    await tab.goto(`http://localhost:${sitePort}/?ttl=60`);
    await tab.locator("button.launcher").click();
    await ask(tab, "How many days do customers have to request a refund?");
    await tab.waitForFunction(`${lastBot}.getAttribute("aria-busy") === "false"`, null, { timeout: 30_000 });
    expect(mints.length - before).toBe(1);
    // 45 s later the 60 s token is close to expiry: the widget fetches a new one before using it.
    await tab.clock.fastForward(45_000);
    await ask(tab, "What does express shipping cost?");
    await tab.waitForFunction(`${lastBot}.getAttribute("aria-busy") === "false"`, null, { timeout: 30_000 });
    expect(mints.length - before).toBeGreaterThanOrEqual(2);
    expect(await text(tab, `${lastBot}.querySelector(".text").textContent`)).toMatch(/15 euros/);
    // Same end user, same chat: the conversation went on.
    expect(await tab.locator(".msg.user").count()).toBe(2);
    await context.close();
  });

  it("is refused from an origin that is not on the token's list, and a token cannot read documents or tenants", async () => {
    // The same site served under another host name is another origin (not on the list).
    const tab = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    await tab.goto(`http://127.0.0.1:${sitePort}/`);
    await tab.locator("button.launcher").click();
    await ask(tab, "How many days do customers have to request a refund?");
    await tab.waitForFunction(`${lastBot} && ${lastBot}.classList.contains("error")`, null, { timeout: 15_000 });
    expect(await text(tab, `${lastBot}.textContent`)).toMatch(/not valid from this origin/);
    await shot(tab, "widget-refused-origin.png");

    // Straight from the page, with a token minted for the right origin: refused from this one.
    const probe = (origin: string) => `(async () => {
      const t = await (await fetch("/kb-token", { method: "POST" })).json();
      const base = ${JSON.stringify(server.base)} + "/api/v1";
      const auth = { headers: { Authorization: "Bearer " + t.token } };
      const out = {};
      out.messages = (await fetch(base + "/chats/" + crypto.randomUUID() + "/messages", auth)).status;
      out.documents = (await fetch(base + "/documents?kb_id=${kb.id}&tenant_id=${kb.tenant_id}", auth)).status;
      out.tenant = (await fetch(base + "/tenants/${kb.tenant_id}", auth)).status;
      out.kb = (await fetch(base + "/knowledge-bases/${kb.id}", auth)).status;
      out.origin = ${JSON.stringify(origin)};
      return out;
    })()`;
    expect(await tab.evaluate(probe("foreign"))).toEqual({ messages: 403, documents: 403, tenant: 403, kb: 403, origin: "foreign" });
    await tab.close();

    // From the allowed origin, the token reaches chats (404: no such chat) but still not documents or tenants.
    const ok = await browser.newPage();
    await ok.goto(`http://localhost:${sitePort}/`);
    expect(await ok.evaluate(probe("allowed"))).toEqual({ messages: 404, documents: 403, tenant: 403, kb: 403, origin: "allowed" });
    await ok.close();
    expect(mints.length).toBeGreaterThan(2);
  });

  it("the demo page works out of the box (npm start)", async () => {
    const tab = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    await tab.goto(`${server.base}/embed/demo`);
    // The demo page has a strict Content-Security-Policy (no eval): only locators here, no page-side scripts.
    await tab.locator("button.launcher").click();
    // The demo knowledge base is provisioned on the first token; give its handbook a moment to be processed.
    await tab.locator(".msg.bot").first().waitFor({ timeout: 30_000 });
    let answer = "";
    for (let attempt = 0; attempt < 20 && !/30 days/.test(answer); attempt++) {
      if (attempt) await tab.waitForTimeout(500);
      await ask(tab, "How many days do customers have to request a refund?");
      await tab.locator('.msg.bot[aria-busy="false"]').nth(attempt).waitFor({ timeout: 30_000 });
      answer = (await tab.locator(".msg.bot .text").last().textContent()) ?? "";
    }
    expect(answer).toMatch(/30 days/);
    await shot(tab, "widget-demo.png");
    await tab.close();
  });
});
