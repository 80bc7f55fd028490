import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium, freePort } from "./browser-helpers.ts";
import { DESKTOP, PHONE, readmeShot, seriousViolations, shoot, SHOTS, checkPhonePage } from "./console-helpers.ts";
import { api, setUpKnowledgeBase, startDevServer, type DevServer } from "../bench/lib.ts";
import { handler as openaiHandler } from "../servers/openai.ts";

/**
 * The console's data and reach pages in a real browser against `wrangler dev`: the memory graph of memories
 * seeded through the API (offline, explicit "Remember that …" is stored by rules), a SQL query on a CSV-backed
 * table with its chart, the playground drawing the chart a tool-calling model asked for (the local OpenAI
 * stand-in obeys "@call sql__query {…}"), and an embed token minted and the widget tried on the page, answering.
 * Each page is checked with axe-core and photographed at 1280×800 and 390×844 (test/.tmp/console/).
 */
const chromiumPath = findChromium();
if (!chromiumPath) console.warn("console data browser test skipped: no Chromium (install Debian's `chromium` or set CHROMIUM_PATH)");

const CSV = "Region,Order Date,Amount,Units\nNorth,2024-07-03,1200.50,3\nSouth,2024-07-15,800,2\nNorth,2024-08-01,300.25,1\nEast,2024-09-30,450,5\n";
const SHADOW = `document.querySelector("[data-kb-chat-widget]").shadowRoot`;
const lastBot = `[...${SHADOW}.querySelectorAll(".msg.bot")].at(-1)`;

/**
 * Waits until `expr` (read in the page) is true. The console's CSP has no 'unsafe-eval', so Playwright's string
 * predicates (new Function) cannot run there; page.evaluate can.
 */
async function until(page: Page, expr: string, timeout: number) {
  const end = Date.now() + timeout;
  while (!(await page.evaluate(`(() => { try { return !!(${expr}); } catch { return false; } })()`))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${expr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function uploadCsv(base: string, cookie: string, kb: { id: string; tenant_id: string }) {
  const bytes = new TextEncoder().encode(CSV);
  const p = (await api(base, "/documents/presign", { cookie, body: { kb_id: kb.id, tenant_id: kb.tenant_id, filename: "sales.csv", mime_type: "text/csv", size_bytes: bytes.byteLength } })).body;
  const put = await fetch(p.upload_url, { method: "PUT", headers: p.headers, body: bytes });
  expect(put.ok).toBe(true);
  for (let i = 0; i < 300; i++) {
    const s = (await api(base, `/documents/status?document_id=${p.document_id}`, { cookie })).body;
    if (s.status === "processed") return;
    if (s.status === "failed") throw new Error(`sales.csv failed: ${s.error}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("sales.csv not processed in time");
}

describe.skipIf(!chromiumPath)("the console's data pages", () => {
  let server: DevServer;
  let models: http.Server;
  let browser: Browser;
  let page: Page;
  let setup: Awaited<ReturnType<typeof setUpKnowledgeBase>>;
  let orgPath: string;

  beforeAll(async () => {
    // The OpenAI-compatible stand-in, for a model that calls tools (the chart in the playground).
    models = http.createServer((req, res) => void openaiHandler(req, res, { url: "" }));
    await new Promise<void>((r) => models.listen(0, "127.0.0.1", r));
    const modelsBase = `http://127.0.0.1:${(models.address() as AddressInfo).port}`;
    server = await startDevServer({
      port: await freePort(),
      vars: {
        OPENAI_BASE_URL: `${modelsBase}/v1`,
        OPENAI_API_KEY: "local-stack-key",
        MODELS: JSON.stringify([{ id: "test-gpt", display_name: "Test GPT (local, calls tools)", context_window: 16000, pricing: { input_per_1k: 1, output_per_1k: 2 } }]),
      },
    });
    setup = await setUpKnowledgeBase(server.base, "data");
    const { cookie, kb, tenantId } = setup;
    await uploadCsv(server.base, cookie, kb);
    // Memories: durable memory on, the knowledge base uses it, and two things to remember.
    await api(server.base, `/tenants/${tenantId}/memory-settings`, { cookie, method: "PATCH", body: { mode: "durable", retention: "explicit_only" } });
    await api(server.base, `/knowledge-bases/${kb.id}`, { cookie, method: "PATCH", body: { kbMemoryMode: "subject" } });
    for (const message of ["Remember that my project code is ZEBRA-42", "Remember that I work at Acme Corp"]) {
      await api(server.base, "/chats", { cookie, body: { id: crypto.randomUUID(), tenant_id: tenantId, knowledge_base_id: kb.id, model: "local-extractive", agent_mode: "quick", message } });
    }
    browser = await chromium.launch({ executablePath: chromiumPath!, headless: true });
    const context = await browser.newContext({ viewport: DESKTOP });
    const [name, value] = cookie.split("=");
    await context.addCookies([{ name, value, url: server.base }]);
    page = await context.newPage();
    page.on("dialog", (d) => void d.accept());
    orgPath = `${server.base}/console/o/${setup.org.id}`;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    models?.close();
    console.log(`console screenshots in ${SHOTS}`);
  });

  /** axe-core, then photographs at both sizes (and the README's, when asked for). */
  async function check(name: string, readme?: { name: string; show: string }) {
    expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
    await shoot(page, name);
    if (readme) {
      // The README's picture shows the part that matters in the window (a string: the test has no DOM types).
      await page.evaluate(`document.querySelector(${JSON.stringify(readme.show)}).scrollIntoView({ block: "center" })`);
      await readmeShot(page, readme.name);
    }
    await page.setViewportSize(PHONE);
    // Charts and the graph fit their new space (ResizeObserver, then a redraw).
    await page.waitForTimeout(300);
    await checkPhonePage(page, name);
    await page.setViewportSize(DESKTOP);
  }

  it("draws the memory graph, and a node shows its memories", async () => {
    await page.goto(`${orgPath}/memory`);
    await page.locator(".react-flow__node").first().waitFor({ timeout: 20_000 });
    expect(await page.locator(".react-flow__node").count()).toBeGreaterThanOrEqual(3);
    await page.locator(".react-flow__edge").first().waitFor();
    await page.locator(".react-flow__node", { hasText: "ZEBRA-42" }).click();
    const memories = page.getByTestId("node-memories");
    await memories.waitFor();
    expect(await memories.textContent()).toMatch(/ZEBRA-42/);
    expect(await memories.textContent()).not.toMatch(/Acme/);
    // Each memory is listed with its source chat and can be deleted.
    expect(await page.getByRole("button", { name: "Source chat" }).count()).toBe(2);
    await check("memory-graph", { name: "memory-graph", show: ".graph" });
    // Deleting a memory takes it out of the list, and its entity out of the graph.
    await page.getByRole("row", { name: /ZEBRA-42/ }).getByRole("button", { name: "Delete" }).click();
    await page.getByRole("row", { name: /ZEBRA-42/ }).waitFor({ state: "detached" });
    await page.locator(".react-flow__node", { hasText: "ZEBRA-42" }).waitFor({ state: "detached" });
    expect(await page.locator(".react-flow__node", { hasText: "Acme Corp" }).count()).toBe(1);
  });

  it("runs a SQL query on a CSV-backed table and draws its chart; a bad query is refused in words", async () => {
    await page.goto(`${orgPath}/kb/${setup.kb.id}/tables`);
    await page.getByRole("heading", { name: "sales" }).waitFor();
    expect(await page.locator(".cards").textContent()).toMatch(/4 rows/);
    const editor = page.getByLabel(/^SQL/);
    await editor.fill("SELECT nope FROM sales");
    await page.getByRole("button", { name: "Run query" }).click();
    await page.locator(".sql-editor [role=alert]").waitFor();
    expect(await page.locator(".sql-editor [role=alert]").textContent()).toMatch(/nope/);
    await editor.fill("SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC");
    await page.getByRole("button", { name: "Run query" }).click();
    await page.getByRole("cell", { name: "1500.75" }).waitFor();
    await page.locator("figure.chart[data-drawn] svg").waitFor({ timeout: 20_000 });
    expect(await page.locator("figure.chart svg").textContent()).toMatch(/North/);
    await check("tables-sql-chart");
  });

  it("draws the chart a model asked for in the playground", async () => {
    await page.goto(`${orgPath}/kb/${setup.kb.id}/playground`);
    await page.getByLabel("Model").selectOption("test-gpt");
    const sql = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY total DESC";
    await page.getByLabel("Question").fill(`Which region sells most? @call sql__query {"query":"${sql}","chart":"bar","x":"region","y":"total","chart_title":"Sales by region"}`);
    await page.getByRole("button", { name: "Ask" }).click();
    await page.locator('.turn-assistant[data-status="complete"]').waitFor({ timeout: 60_000 });
    await page.locator(".turn-assistant figure.chart[data-drawn] svg").waitFor({ timeout: 20_000 });
    expect(await page.locator(".turn-assistant figure.chart").getAttribute("aria-label")).toBe("Sales by region");
    // The rows the query returned (data_preview), as a table.
    expect(await page.locator(".turn-assistant details", { hasText: "rows from" }).textContent()).toMatch(/3 rows from.*North.*1500\.75/);
    await check("playground-chart", { name: "playground-chart", show: ".turn-assistant figure.chart" });
  });

  it("mints an embed token, and the widget tried on the page answers", async () => {
    await page.goto(`${orgPath}/embedding`);
    await page.getByRole("button", { name: "Mint token" }).click();
    await page.getByTestId("embed-token").waitFor();
    expect(await page.getByTestId("embed-token").textContent()).toMatch(/^kbe_/);
    expect(await page.getByTestId("snippet").textContent()).toContain(`${server.base}/widget.js`);
    // A bad origin is refused in the API's words.
    await page.getByLabel(/Allowed origins/).fill("https://shop.example.com/path");
    await page.getByRole("button", { name: "Mint token" }).click();
    await page.locator("form [role=alert]").waitFor();
    // ... with the API's details: which field, and why.
    expect(await page.locator("form [role=alert]").textContent()).toMatch(/invalid origin.*body\.allowed_origins\.0: Must be an origin/);
    await page.getByRole("button", { name: "Try the widget" }).click();
    await until(page, `!${SHADOW}.querySelector("#kbw-panel").hidden`, 15_000);
    await page.locator("#kbw-input").fill("What is the total amount by region in the sales table?");
    await page.locator("#kbw-input").press("Enter");
    await until(page, `${SHADOW}.querySelectorAll(".msg.user").length === 1 && ${lastBot}.getAttribute("aria-busy") === "false"`, 60_000);
    expect(await page.evaluate(`${lastBot}.textContent`)).toMatch(/1500\.75/);
    await check("embedding-widget");
  });

  it("installs a catalog skill, edits an artifact into a second revision shown side by side and publishes it", async () => {
    await page.goto(`${orgPath}/skills`);
    const install = page.getByRole("button", { name: /^Install / }).first();
    await install.waitFor();
    const skill = ((await install.getAttribute("aria-label")) ?? "").replace(/^Install /, "");
    await install.click();
    await page.getByRole("button", { name: `Edit ${skill}` }).waitFor();
    await check("skills");

    await page.goto(`${orgPath}/kb/${setup.kb.id}/artifacts`);
    await page.getByRole("button", { name: "New artifact" }).click();
    await page.getByLabel("Title", { exact: true }).fill("Returns policy");
    await page.getByLabel("Content", { exact: true }).fill("Returns within 30 days.\nRefunds in 5 business days.");
    await page.getByRole("button", { name: "Create artifact" }).click();
    await page.waitForURL(/\/artifacts\/[^/]+$/);
    await page.getByLabel(/^Content/).fill("Returns within 30 days.\nRefunds in 5 business days.\nExchanges are free.");
    await page.getByRole("button", { name: "Save a revision" }).click();
    await page.getByText("Saved as revision 2.").waitFor();
    await page.getByRole("region", { name: "Revision 2" }).locator(".changed", { hasText: "Exchanges are free." }).waitFor();
    await page.getByRole("button", { name: "Publish", exact: true }).click();
    const link = page.getByRole("link", { name: "open the published page" });
    await link.waitFor();
    expect(await link.getAttribute("href")).toMatch(/\/p\/[\w-]+$/);
    await check("artifact");
  });

  it("shows credits, usage per day as a chart and the usage log with filters", async () => {
    await page.goto(`${orgPath}/usage`);
    await page.locator("figure.chart[data-drawn] svg").waitFor({ timeout: 20_000 });
    await page.getByRole("cell", { name: "test-gpt" }).first().waitFor();
    // Only what API keys and embed tokens did: the widget's answer on the embedding page.
    await page.getByLabel("Made with").selectOption("true");
    await page.getByRole("cell", { name: /^emb_/ }).first().waitFor();
    expect(await page.getByRole("cell", { name: "test-gpt" }).count()).toBe(0);
    await check("usage");
    // Dates the wrong way round are refused, in the API's words.
    await page.getByLabel("From (UTC)").fill("2026-11-20");
    await page.getByLabel("To (UTC)").fill("2026-11-10");
    await page.getByRole("alert").first().waitFor();
    expect(await page.getByRole("alert").first().textContent()).toMatch(/start_date must not be after end_date/);
  });
});
