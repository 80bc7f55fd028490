import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Cron } from "croner";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findChromium, freePort } from "./browser-helpers.ts";
import { DESKTOP, PHONE, seriousViolations, shoot, SHOTS, checkPhonePage } from "./console-helpers.ts";
import { setUpKnowledgeBase, startDevServer, uploadAndWait, type DevServer } from "../bench/lib.ts";
import { handlers } from "../servers/index.ts";

/**
 * The console's agents and tools in a real browser against `wrangler dev`: create an agent, deploy a second
 * version and read the diff, run it (streamed) and watch the run finish, set a schedule after reading its
 * next occurrences (compared with croner's own answer); register a local MCP server (the SDK's McpServer from
 * test/servers/mcp.ts) and read its tools and input schemas, authorize one that signs in by OAuth with one
 * button (a popup), register an external A2A agent (test/servers/a2a.ts) and see its card, and delegate to it
 * from the playground. Every page is checked with axe-core and photographed at 1280×800 and 390×844.
 */
const chromiumPath = findChromium();
if (!chromiumPath) console.warn("console agents browser test skipped: no Chromium (install Debian's `chromium` or set CHROMIUM_PATH)");

const REFUNDS = "# Refunds\n\nCustomers can request a refund within 30 days of purchase. Refunds are paid to the original payment method within 5 business days.\n";

/** One of test/servers' protocol servers, on its own port. */
async function protocolServer(name: "mcp" | "a2a" | "connectors"): Promise<{ url: string; server: http.Server }> {
  const handler = await handlers[name]();
  const self = { url: "" };
  const server = http.createServer((req, res) => {
    Promise.resolve(handler(req, res, self)).catch((e) => {
      res.statusCode = 500;
      res.end(String(e));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  self.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: self.url, server };
}

describe.skipIf(!chromiumPath)("the console: agents and tools", () => {
  let server: DevServer;
  let mcp: { url: string; server: http.Server };
  let a2a: { url: string; server: http.Server };
  let apps: { url: string; server: http.Server };
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let org: string;
  let kbId: string;
  const pages: Record<string, string> = {};

  beforeAll(async () => {
    [mcp, a2a, apps] = await Promise.all([protocolServer("mcp"), protocolServer("a2a"), protocolServer("connectors")]);
    // GitHub is connectable, against the local stand-in of its OAuth dialect and API (test/servers/connectors.ts).
    const github = { authorize_url: `${apps.url}/github/oauth/authorize`, token_url: `${apps.url}/github/oauth/token`, api_base_url: `${apps.url}/github/api` };
    server = await startDevServer({
      port: await freePort(),
      vars: {
        LOCAL_MODEL_TOKEN_DELAY_MS: "30",
        ALLOW_PRIVATE_URLS: [mcp.url, a2a.url, apps.url].map((u) => new URL(u).host).join(","),
        CONNECTORS: JSON.stringify({ github: { client_id: "github-client", client_secret: "github-secret" } }),
        CONNECTOR_ENDPOINTS: JSON.stringify({ github }),
      },
    });
    // The account, organization and knowledge base come from the API (the first console test walks sign-up).
    const setup = await setUpKnowledgeBase(server.base, "agents");
    org = setup.org.id;
    kbId = setup.kbId;
    await uploadAndWait(server.base, { cookie: setup.cookie }, setup.kb, "refunds.md", REFUNDS);
    browser = await chromium.launch({ executablePath: chromiumPath!, headless: true });
    context = await browser.newContext({ viewport: DESKTOP });
    const eq = setup.cookie.indexOf("=");
    await context.addCookies([{ name: setup.cookie.slice(0, eq), value: setup.cookie.slice(eq + 1), url: server.base }]);
    page = await context.newPage();
    page.on("dialog", (d) => void d.accept());
    page.on("pageerror", (e) => console.log(`page error: ${e.message}`));
  });

  // A failed step leaves a picture of the page it failed on.
  beforeEach((ctx) => ctx.onTestFailed(() => shoot(page, `failed-${ctx.task.name.slice(0, 30).replace(/\W+/g, "-")}`).then(() => undefined)));

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    mcp?.server.close();
    a2a?.server.close();
    apps?.server.close();
    console.log(`console screenshots in ${SHOTS}`);
  });

  async function check(name: string) {
    pages[name] = new URL(page.url()).pathname + new URL(page.url()).search;
    expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
    await shoot(page, name);
  }

  const tab = (name: string) => page.getByRole("navigation", { name: "Agent" }).getByRole("link", { name }).click();

  it("creates an agent", async () => {
    await page.goto(`${server.base}/console/o/${org}/agents`);
    await page.getByText("No agents in this tenant yet.").waitFor();
    await page.getByText("Create an agent").click();
    await page.getByLabel("Agent name").fill("Daily digest");
    await page.getByLabel("Goal").fill("Summarize the refund policy in one sentence.");
    const model = page.getByLabel("Model");
    await model.locator("option:not([value=''])").first().waitFor({ state: "attached" });
    await model.selectOption({ index: 1 });
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.waitForURL(/\/agents\/[^/?]+$/);
    await page.getByRole("heading", { level: 1, name: "Daily digest" }).waitFor();
    await page.getByText("version 1", { exact: true }).waitFor();
  });

  it("deploys a second version and shows the diff", async () => {
    await tab("Configuration");
    await page.getByLabel("Instructions (optional)").fill("Answer in French.\nCite the policy.");
    await page.getByRole("button", { name: "Deploy version 2" }).click();
    await page.getByText("Deployed version 2.").waitFor();
    expect(await page.getByTestId("agent-card-url").textContent()).toMatch(/\/api\/v1\/agents\/[^/]+\/a2a\/\.well-known\/agent-card\.json$/);
    await tab("Versions");
    const diff = page.getByTestId("version-diff");
    await diff.waitFor();
    expect(await diff.locator(".diff-removed").allTextContents()).toEqual([expect.stringContaining("instructions: null")]);
    expect(await diff.locator(".diff-added").allTextContents()).toEqual([
      expect.stringContaining("instructions:"),
      expect.stringContaining("Answer in French."),
      expect.stringContaining("Cite the policy."),
    ]);
    // Comparing a version with itself: nothing differs.
    await page.getByLabel("From version").selectOption("2");
    await page.getByText("Versions 2 and 2 have the same configuration.").waitFor();
    await page.getByLabel("From version").selectOption("1");
    await check("agent-versions");
  });

  it("runs it with the answer streamed and shows the run finished, with its usage", async () => {
    await tab("Run");
    await page.getByRole("button", { name: "Run now" }).click();
    // The answer streams in (the stop button stays while it does), then the run is listed as completed.
    await page.getByRole("button", { name: "Stop the run" }).waitFor();
    await page.locator(".turn-assistant[data-status=complete]").waitFor({ timeout: 30_000 });
    expect((await page.locator(".turn-assistant .answer-text").textContent())?.length).toBeGreaterThan(10);
    const row = page.locator("tr[data-status=completed]");
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toMatch(/v2.*\d+ tokens · [\d.]+ credits/);
    // Run again and stop it while it streams: the run is cancelled and its partial answer kept.
    await page.getByRole("button", { name: "Run now" }).click();
    await page.getByText(/^Run run_/).waitFor();
    await page.getByRole("button", { name: "Stop the run" }).click();
    await page.locator("tr[data-status=cancelled]").waitFor({ timeout: 15_000 });
    await page.locator(".turn-assistant[data-status=partial]").waitFor();
    // The runs filtered by status.
    await page.getByLabel("Status").selectOption("completed");
    await page.locator("tr[data-status=cancelled]").waitFor({ state: "detached" });
    expect(await page.locator("tr[data-run]").count()).toBe(1);
    await page.getByLabel("Status").selectOption("");
    await page.locator("tr[data-status=cancelled]").waitFor();
    await check("agent-runs");
  });

  it("previews the next five occurrences in the chosen time zone, then saves the schedule", async () => {
    await tab("Schedule");
    await page.getByText("No schedule.").waitFor();
    await page.getByLabel("Cron expression").fill("61 8 * * *");
    await page.getByText(/Invalid cron expression/).waitFor();
    expect(await page.getByRole("button", { name: "Save the schedule" }).isDisabled()).toBe(true);
    await page.getByLabel("Cron expression").fill("30 8 * * 1-5");
    await page.getByLabel("Time zone").selectOption("Asia/Tokyo");
    const times = page.getByTestId("next-occurrences").locator("time");
    await page.getByRole("heading", { name: "Next five occurrences (Asia/Tokyo)" }).waitFor();
    expect(await times.count()).toBe(5);
    // The same instants croner gives the Worker (src/services/agents/schedule.ts).
    const expected = new Cron("30 8 * * 1-5", { timezone: "Asia/Tokyo", paused: true, mode: "5-part" }).nextRuns(5).map((d) => d.toISOString());
    const shown = [];
    for (let i = 0; i < 5; i++) shown.push(await times.nth(i).getAttribute("datetime"));
    expect(shown).toEqual(expected);
    await page.getByRole("button", { name: "Save the schedule" }).click();
    await page.getByText("Saved as version 3.").waitFor();
    const current = page.getByRole("region", { name: "Current schedule" });
    await current.getByText("30 8 * * 1-5").waitFor();
    await current.getByText(/next run/).waitFor();
    await page.getByRole("heading", { name: "Recent occurrences" }).waitFor();
    await check("agent-schedule");
    await page.goto(`${server.base}/console/o/${org}/agents`);
    await page.getByRole("row", { name: /Daily digest.*v3/ }).waitFor();
    await check("agents");
  });

  it("registers an MCP server and shows its tools with their input schemas; authorizes one by OAuth", async () => {
    await page.goto(`${server.base}/console/o/${org}/mcp-servers`);
    await page.getByText("No MCP servers registered yet.").waitFor();
    await page.getByLabel("Server name").fill("Test tools");
    await page.getByLabel("Server URL").fill(`${mcp.url}/open/mcp`);
    await page.getByRole("button", { name: "Register server" }).click();
    const card = page.locator("[data-server='Test tools']");
    await card.getByText("Connected: 4 tools").waitFor({ timeout: 20_000 });
    await card.getByRole("button", { name: "Tools (4)" }).click();
    const dialog = page.getByRole("dialog", { name: "Tools of Test tools" });
    const echo = dialog.locator("[data-tool=echo]");
    await echo.getByText("Echo the text back").waitFor();
    await echo.getByText("Input schema").click();
    expect(JSON.parse((await echo.locator("pre").textContent())!)).toMatchObject({ type: "object", properties: { text: { type: "string" } } });
    await dialog.getByRole("button", { name: "Close" }).click();
    // A server behind OAuth: one button opens the authorization in a popup; the page turns ready by itself.
    await page.getByLabel("Server name").fill("Tracker");
    await page.getByLabel("Server URL").fill(`${mcp.url}/r/console-e2e/mcp`);
    await page.getByRole("button", { name: "Register server" }).click();
    const tracker = page.locator("[data-server='Tracker']");
    await tracker.getByText(/asks you to sign in/).waitFor({ timeout: 20_000 });
    const [popup] = await Promise.all([page.waitForEvent("popup"), tracker.getByRole("button", { name: "Authorize" }).click()]);
    await popup.getByRole("heading", { name: "MCP server connected" }).waitFor({ timeout: 20_000 });
    await tracker.getByText("Connected: 4 tools").waitFor({ timeout: 10_000 });
    await popup.close();
    // A server that cannot be used: its status and last error in words.
    await page.getByLabel("Server name").fill("Broken");
    await page.getByLabel("Server URL").fill(`${mcp.url}/redirect-private/mcp`);
    await page.getByRole("button", { name: "Register server" }).click();
    const broken = page.locator("[data-server='Broken']");
    await broken.getByText("error", { exact: true }).waitFor({ timeout: 20_000 });
    expect(await broken.getByTestId("server-status").textContent()).toMatch(/\w+ \w+ \w+/);
    await broken.getByRole("button", { name: "Delete" }).click();
    await broken.waitFor({ state: "detached" });
    // The service's own endpoint: the client configurations to copy.
    expect(await page.getByTestId("client-config").textContent()).toContain(`claude mcp add --transport http knowledge-base ${server.base}/api/v1/mcp`);
    await page.getByRole("tab", { name: "Cursor" }).click();
    expect(JSON.parse((await page.getByTestId("client-config").textContent())!)).toEqual({ mcpServers: { "knowledge-base": { url: `${server.base}/api/v1/mcp` } } });
    await page.getByText("No client connected by OAuth yet.").waitFor();
    await check("mcp-servers");
  });

  it("lists an MCP client that was allowed on the consent page, and revokes it (its token then answers 401)", async () => {
    const base = server.base;
    const redirectUri = `${mcp.url}/callback`;
    const reg = await fetch(`${base}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_name: "Desk client", redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code"], response_types: ["code"] }),
    });
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const verifier = randomBytes(32).toString("base64url");
    const authorize = new URL(`${base}/oauth/authorize`);
    const params = { response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope: "kb:read", state: "s-1", code_challenge: createHash("sha256").update(verifier).digest("base64url"), code_challenge_method: "S256", resource: `${base}/api/v1/mcp` };
    for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
    // The consent page, in the signed-in browser.
    await page.goto(authorize.toString());
    await page.getByRole("checkbox", { name: "agents" }).check();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((u) => u.toString().startsWith(redirectUri));
    const code = new URL(page.url()).searchParams.get("code")!;
    const token = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier, resource: `${base}/api/v1/mcp` }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const listTools = () =>
      fetch(`${base}/api/v1/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
    expect((await listTools()).status).toBe(200);
    await page.goto(`${server.base}/console/o/${org}/mcp-servers`);
    const row = page.getByRole("row", { name: /Desk client/ });
    await row.waitFor();
    expect(await row.textContent()).toContain(new URL(mcp.url).hostname);
    await row.getByText("agents", { exact: true }).waitFor();
    await row.getByRole("button", { name: "Revoke" }).click();
    await page.getByText("No client connected by OAuth yet.").waitFor();
    expect((await listTools()).status).toBe(401);
  });

  it("registers an external A2A agent with headers and shows its card", async () => {
    await page.goto(`${server.base}/console/o/${org}/a2a-agents`);
    await page.getByText("No external agents registered for this knowledge base.").waitFor();
    await page.getByLabel("Agent name").fill("Warranty desk");
    await page.getByLabel("Card URL").fill(`${a2a.url}/private/.well-known/agent-card.json`);
    await page.getByRole("button", { name: "Register agent" }).click();
    // Without its header the card cannot be fetched: the API's words.
    await page.getByRole("alert").getByText(/answered HTTP 401/).waitFor();
    await page.getByLabel("Header 1 name").fill("Authorization");
    await page.getByLabel("Header 1 value").fill("Bearer remote-secret");
    await page.getByRole("button", { name: "Register agent" }).click();
    const card = page.locator("[data-a2a='Warranty desk']");
    await card.getByText("ready").waitFor();
    await card.getByText("Authorization", { exact: true }).waitFor();
    // Edit: only what changed is sent; the header stays.
    await card.getByRole("button", { name: "Edit" }).click();
    const edit = page.getByRole("dialog", { name: "Edit Warranty desk" });
    await edit.getByLabel("Description (optional)").fill("Knows the Zorblax warranty terms.");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await card.getByText("Knows the Zorblax warranty terms.").waitFor();
    await card.getByText("Authorization", { exact: true }).waitFor();
    await check("a2a-agents");
  });

  it("connects an app through the provider's OAuth flow, shows the account, and disconnects it", async () => {
    await page.goto(`${server.base}/console/o/${org}/connectors`);
    // Connect: the provider's OAuth flow in this tab, back to the page with the outcome and the account.
    const gh = page.locator("[data-connector=github]");
    await gh.getByRole("button", { name: "Connect", exact: true }).click();
    await page.waitForURL(/\/connectors\?.*status=connected/);
    await page.getByText("GitHub is connected.").waitFor();
    await gh.getByText("Connected as alice-gh").waitFor();
    await check("connectors");
    await gh.getByRole("button", { name: "Disconnect" }).click();
    await gh.getByRole("button", { name: "Connect", exact: true }).waitFor();
    expect(await page.getByText("GitHub is connected.").count()).toBe(0);
  });

  it("delegates to the external agent from the playground, with an MCP server enabled on the chat", async () => {
    await page.goto(`${server.base}/console/o/${org}/kb/${kbId}/playground`);
    await page.getByText("Tools: MCP servers and external agents").click();
    await page.getByRole("checkbox", { name: /Test tools/ }).check();
    await page.getByRole("checkbox", { name: /Warranty desk/ }).check();
    await page.getByLabel("Mode", { exact: true }).selectOption("deep");
    await page.getByLabel("Question").fill("How long is the warranty?");
    await page.getByRole("button", { name: "Ask" }).click();
    await page.locator(".turn-assistant[data-status=complete]").waitFor({ timeout: 40_000 });
    await page.getByText(/steps \(thoughts and tool calls\)/).click();
    await page.locator(".steps").getByText(/delegate__/).first().waitFor();
    // The new chat was opened with the MCP server enabled on it.
    await page.waitForURL(/\?chat=/);
    await page.getByRole("checkbox", { name: /Test tools/ }).waitFor();
    expect(await page.getByRole("checkbox", { name: /Test tools/ }).isChecked()).toBe(true);
    await check("playground-tools");
  });

  it("fits a phone and passes axe there", async () => {
    await page.setViewportSize(PHONE);
    for (const [name, path] of Object.entries(pages)) {
      await page.goto(`${server.base}${path}`);
      await page.getByRole("heading", { level: 1 }).waitFor();
      await page.waitForLoadState("networkidle");
      await checkPhonePage(page, name);
    }
  });
});
