import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium, freePort } from "./browser-helpers.ts";
import { DESKTOP, dropFiles, PHONE, readmeShot, seriousViolations, shoot, SHOTS, checkPhonePage } from "./console-helpers.ts";
import { root, startDevServer, type DevServer } from "../bench/lib.ts";
import { generateSchema } from "../../src/console/scripts/openapi-types.ts";

/**
 * The web console in a real browser against `wrangler dev`, as a new user would use it: sign up → create an
 * organization → a knowledge base → drop two files and watch them reach `processed` (plus a refused type, a
 * file that fails processing with its reason, a reprocess) → ask in the playground (streamed) and open a
 * citation, a follow-up, a public share link, a fork, deep mode's steps, stop → invite a member (who accepts,
 * and whose role is refused an owner's action in the API's words) → create an API key (and use it). Every
 * main page is checked with axe-core (no serious or critical violations) and photographed at 1280×800 and
 * 390×844 into test/.tmp/console/ (the answers are paced at 40 ms a token, so streaming and stop are seen).
 */
const chromiumPath = findChromium();
if (!chromiumPath) console.warn("console browser test skipped: no Chromium (install Debian's `chromium` or set CHROMIUM_PATH)");

const REFUNDS =
  "# Refunds\n\nCustomers can request a refund within 30 days of purchase. Refunds are paid to the original payment method within 5 business days.\n";
const SHIPPING =
  "# Shipping\n\nOrders ship within 2 business days from our warehouse in Leeds. Express shipping costs 15 euros and arrives the next day.\n";

const html = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
const SITE: Record<string, string> = {
  "/": html("Help centre", '<p>Welcome to the help centre of Acme.</p><a href="/returns">Returns</a> <a href="/delivery">Delivery</a>'),
  "/returns": html("Returns", "<p>Returned parcels are inspected within three working days of arriving at the Leeds warehouse.</p>"),
  "/delivery": html("Delivery", "<p>Deliveries to the Channel Islands take four to six working days.</p>"),
};

describe.skipIf(!chromiumPath)("the console", () => {
  let server: DevServer;
  let site: http.Server;
  let siteBase: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pages: Record<string, string> = {};
  const email = `owner-${Date.now()}@example.com`;

  beforeAll(async () => {
    // A small web site for "Web pages" (the URL guard allows exactly its address).
    site = http.createServer((req, res) => {
      const page = SITE[req.url ?? "/"];
      res.writeHead(page ? 200 : 404, { "Content-Type": "text/html; charset=utf-8" });
      res.end(page ?? "not found");
    });
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
    siteBase = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    server = await startDevServer({
      port: await freePort(),
      vars: { LOCAL_MODEL_TOKEN_DELAY_MS: "40", ALLOW_PRIVATE_URLS: new URL(siteBase).host },
    });
    browser = await chromium.launch({ executablePath: chromiumPath!, headless: true });
    context = await browser.newContext({ viewport: DESKTOP });
    page = await context.newPage();
    page.on("dialog", (d) => void d.accept());
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    site?.close();
    console.log(`console screenshots in ${SHOTS}`);
  });

  async function check(name: string) {
    pages[name] = new URL(page.url()).pathname + new URL(page.url()).search;
    expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
    await shoot(page, name);
    await readmeShot(page, name);
  }

  it("sends a browser from / to the console, which asks it to sign in", async () => {
    await page.goto(`${server.base}/`);
    await page.waitForURL(/\/console\/sign-in$/);
    await expect(page.getByRole("heading", { name: "Sign in" }).isVisible()).resolves.toBe(true);
    // A wrong password is refused in words.
    await page.getByLabel("Email").fill("nobody@example.com");
    await page.getByLabel("Password").fill("wrong-password-123");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toMatch(/\w+ \w+/);
    await check("sign-in");
  });

  it("signs up and creates an organization", async () => {
    await page.getByRole("link", { name: "Create an account" }).click();
    await page.getByLabel("Name").fill("Ada Owner");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("correct-horse-battery");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL(/\/console\/organizations\/new$/);
    await page.getByLabel("Name").fill("Acme Support");
    await page.getByRole("button", { name: "Create organization" }).click();
    await page.waitForURL(/\/console\/o\/[^/]+\/knowledge-bases$/);
    await page.getByText("No knowledge bases in this tenant yet.").waitFor();
    await check("knowledge-bases");
  });

  it("creates a knowledge base, uploads two files by drag and drop and shows them processed", async () => {
    await page.getByLabel("Knowledge base name").fill("Handbook");
    await page.getByRole("button", { name: "Create knowledge base" }).click();
    await page.waitForURL(/\/kb\/[^/]+$/);
    await page.getByText("No documents yet.").waitFor();
    await dropFiles(page, "[data-testid=dropzone]", [
      { name: "refunds.md", type: "text/markdown", text: REFUNDS },
      { name: "shipping.md", type: "text/markdown", text: SHIPPING },
    ]);
    for (const name of ["refunds.md", "shipping.md"]) {
      await page.locator(`[data-upload="${name}"] [data-stage="processed"]`).waitFor({ timeout: 60_000 });
      await page.locator(`tr[data-document="${name}"] [data-stage="processed"]`).waitFor();
    }
    // A file type the API does not accept: the refusal is shown in its words, next to the file.
    await dropFiles(page, "[data-testid=dropzone]", [{ name: "tool.exe", type: "application/x-msdownload", text: "MZ" }]);
    const refusal = page.locator('[data-upload="tool.exe"] [role=alert]');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/tool\.exe|not (an )?accepted|unsupported/i);
    // A file that cannot be read fails processing, and the reason is shown in words on its row.
    await dropFiles(page, "[data-testid=dropzone]", [{ name: "broken.pdf", type: "application/pdf", text: "this is not a PDF" }]);
    await page.locator('tr[data-document="broken.pdf"] [data-stage="failed"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('tr[data-document="broken.pdf"] .note-error').textContent()).toMatch(/^Failed: \w+/);
    await check("documents");
    // A web site: its pages are discovered, chosen and added; each is processed like a file.
    await page.getByLabel("Page or site address").fill(`${siteBase}/`);
    await page.getByRole("button", { name: "Discover site" }).click();
    const found = page.locator("fieldset", { hasText: "pages found" });
    await found.waitFor();
    expect(await found.locator("input[type=checkbox]").count()).toBeGreaterThanOrEqual(2);
    await found.getByRole("button", { name: /^Add \d+ pages$/ }).click();
    const pagesRows = page.locator(`tr:has(a[href^="${siteBase}"])`);
    await pagesRows.nth(1).waitFor({ timeout: 30_000 });
    const rows = await pagesRows.count();
    await page.locator(`tr:has(a[href^="${siteBase}"]) [data-stage="processed"]`).nth(rows - 1).waitFor({ timeout: 60_000 });
    // Reprocess: the document goes through the stages again and ends processed.
    await page.locator('tr[data-document="refunds.md"]').getByRole("button", { name: "Reprocess" }).click();
    await page.locator('tr[data-document="refunds.md"] [data-stage="processed"]').waitFor({ state: "detached", timeout: 10_000 }).catch(() => {});
    await page.locator('tr[data-document="refunds.md"] [data-stage="processed"]').waitFor({ timeout: 60_000 });
  });

  it("answers in the playground, streamed, with a citation that opens its passage", async () => {
    await page.getByRole("navigation", { name: "Knowledge base" }).getByRole("link", { name: "Playground" }).click();
    await page.getByText("Ask a question about this knowledge base.").waitFor();
    await check("playground-empty");
    // Count how often the answer's text changes while it streams.
    await page.evaluate(`window.renders = 0; new MutationObserver(() => (window.renders += 1)).observe(document.querySelector(".turns"), { childList: true, subtree: true, characterData: true })`);
    await page.getByLabel("Question").fill("How many days do customers have to request a refund?");
    await page.getByRole("button", { name: "Ask" }).click();
    await page.getByRole("button", { name: "Stop" }).waitFor();
    await page.locator('.turn-assistant[data-status="complete"]').waitFor({ timeout: 60_000 });
    const answer = await page.locator(".turn-assistant .answer-text").textContent();
    expect(answer).toMatch(/30 days/);
    expect(await page.evaluate("window.renders")).toBeGreaterThan(3);
    await page.locator(".follow-ups button").first().waitFor({ timeout: 30_000 });
    await readmeShot(page, "playground-answer");
    await page.locator(".turn-assistant .cite").first().click();
    const passage = page.getByTestId("passage");
    await passage.waitFor();
    expect(await passage.textContent()).toMatch(/refund/i);
    await check("playground-citation");
    await page.getByRole("button", { name: "Close" }).click();
    const chats = page.getByRole("complementary", { name: "Chats" }).getByRole("link");
    expect(await chats.count()).toBe(1);

    // Follow-up questions are offered; one click asks it in the same chat.
    const followUps = page.locator(".follow-ups button");
    await followUps.first().waitFor({ timeout: 30_000 });
    await followUps.first().click();
    await page.locator('.turn-assistant[data-status="complete"]').nth(1).waitFor({ timeout: 60_000 });
    expect(await chats.count()).toBe(1);

    // Shared with anyone who has the link: the link opens without signing in.
    await page.getByLabel("Who can read this chat").selectOption("public");
    const link = page.getByRole("link", { name: "Shared link" });
    await link.waitFor();
    const shared = await fetch((await link.getAttribute("href"))!);
    expect(shared.status).toBe(200);

    // Forked into a new private chat seeded with this one's messages.
    await page.getByRole("button", { name: "Fork into a new chat" }).click();
    await chats.nth(1).waitFor();
    await page.locator(".turn-user").first().waitFor();

    // Deep mode in a new chat: its steps (thoughts, tool calls) are listed with the answer, and stay.
    await page.getByRole("button", { name: "New chat", exact: true }).click();
    await page.getByText("Ask a question about this knowledge base.").waitFor();
    await page.getByLabel("Mode", { exact: true }).selectOption("deep");
    await page.getByLabel("Question").fill("Where do orders ship from, and how fast?");
    await page.getByRole("button", { name: "Ask" }).click();
    await page.locator('.turn-assistant[data-status="complete"]').waitFor({ timeout: 60_000 });
    await chats.nth(2).waitFor();
    await page.locator(".steps summary").click();
    expect(await page.locator(".steps").textContent()).toMatch(/Searching the knowledge base/);
    expect(await page.locator(".turn-assistant .answer-text").textContent()).toMatch(/Leeds/);

    // Stop while the answer streams: the partial answer stays, marked as stopped.
    await page.getByLabel("Question").fill("Tell me everything about refunds, payment methods, shipping, express delivery and the warehouse.");
    await page.getByRole("button", { name: "Ask" }).click();
    const last = page.locator(".turn-assistant").last();
    await last.locator(".answer-text").waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator('.turn-assistant[data-status="partial"]').waitFor({ timeout: 30_000 });
    await last.getByText("Stopped: the answer so far is kept.").waitFor();
    await page.getByRole("button", { name: "Ask" }).waitFor();
  });

  it("has API types generated from the document this server serves, byte for byte", async () => {
    const doc = (await (await fetch(`${server.base}/openapi.json`)).json()) as Record<string, unknown>;
    const committed = readFileSync(path.join(root, "src/console/api/schema.d.ts"), "utf8");
    expect(await generateSchema(doc), "stale: run `npm run console:api`").toBe(committed);
  });

  it("invites a member with a role", async () => {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Members" }).click();
    await page.getByLabel("Email").fill("dev@example.com");
    await page.getByLabel("Role", { exact: true }).selectOption("developer");
    await page.getByRole("button", { name: "Send invitation" }).click();
    await page.getByRole("cell", { name: "dev@example.com" }).waitFor();
    expect(await page.getByRole("row", { name: /dev@example\.com/ }).textContent()).toContain("Developer");
    await check("members");
  });

  it("lets the invited person accept, and shows the API's refusal when their role may not do something", async () => {
    const other = await browser.newContext({ viewport: DESKTOP });
    try {
      const p = await other.newPage();
      await p.goto(`${server.base}/console/sign-up`);
      await p.getByLabel("Email").fill("dev@example.com");
      await p.getByLabel("Password").fill("another-good-password");
      await p.getByRole("button", { name: "Create account" }).click();
      await p.waitForURL(/\/organizations\/new$/);
      // Signed up without an organization: pointed at the invitation waiting for this email.
      await p.getByRole("link", { name: "see your invitations" }).click();
      await p.getByRole("button", { name: "Accept" }).click();
      await p.waitForURL(/\/o\/[^/]+\/knowledge-bases$/);
      expect(await p.getByLabel("Organization").inputValue()).toBe(/\/o\/([^/]+)\//.exec(pages["members"])![1]);
      await p.getByRole("link", { name: "Handbook" }).waitFor();
      // A developer may not invite: the API refuses, and the console says so in the API's words.
      await p.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Members" }).click();
      await p.getByLabel("Email").fill("someone@example.com");
      await p.getByRole("button", { name: "Send invitation" }).click();
      const refusal = p.getByRole("alert");
      await refusal.waitFor();
      expect(await refusal.textContent()).toMatch(/\w+ \w+ \w+/);
    } finally {
      await other.close();
    }
  });

  it("creates an API key, shows its secret once, and the key works", async () => {
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "API keys" }).click();
    await page.getByText("No keys in this environment yet.").waitFor();
    await page.getByLabel("Key name").fill("shop backend");
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = page.getByTestId("new-key");
    await secret.waitFor();
    const key = (await secret.textContent()) ?? "";
    expect(key).toMatch(/^kbk_/);
    await check("api-key-created");
    await page.getByRole("button", { name: "I have stored it" }).click();
    await page.getByRole("cell", { name: "shop backend" }).waitFor();
    // Shown once: the list has only its prefix.
    expect(await page.content()).not.toContain(key);
    const me = await fetch(`${server.base}/api/v1/me`, { headers: { Authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { type: string }).type).toBe("api_key");
  });

  it("has the other main pages accessible, and everything fits a phone", async () => {
    const org = /\/o\/([^/]+)\//.exec(pages["members"])![1];
    for (const name of ["tenants", "environments", "settings"]) {
      await page.goto(`${server.base}/console/o/${org}/${name}`);
      await page.getByRole("heading", { level: 1 }).waitFor();
      await page.waitForLoadState("networkidle");
      await check(name);
    }
    // A few writes of these pages, each read back from the API's answer.
    await page.getByLabel("Add credits to the organization").fill("250");
    await page.getByRole("button", { name: "Add credits" }).click();
    await page.getByText("1250", { exact: true }).first().waitFor();
    await page.goto(`${server.base}/console/o/${org}/tenants`);
    await page.getByLabel("New tenant").fill("Globex");
    await page.getByRole("button", { name: "Create tenant" }).click();
    const globex = page.getByRole("row", { name: /Globex/ });
    await globex.waitFor();
    await globex.getByRole("button", { name: "Add credits" }).click();
    await page.getByLabel("Credits to move").fill("40");
    await page.getByRole("button", { name: "Move credits" }).click();
    await globex.getByText(/\/ 40$/).waitFor();
    await page.goto(`${server.base}/console/o/${org}/environments`);
    await page.getByLabel("New environment").fill("staging");
    await page.getByRole("button", { name: "Create environment" }).click();
    await page.getByLabel("Name of staging").waitFor();
    await page.goto(`${server.base}${pages["documents"].replace(/\/?$/, "/settings")}`);
    await page.getByLabel("Persona").fill("The support desk of Acme");
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Saved.").waitFor();
    await page.setViewportSize(PHONE);
    for (const [name, path] of Object.entries(pages)) {
      await page.goto(`${server.base}${path}`);
      await page.getByRole("heading", { level: 1 }).waitFor();
      await page.waitForLoadState("networkidle");
      await checkPhonePage(page, name);
    }
  });
});
