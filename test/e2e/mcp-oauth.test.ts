import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, startDevServer, type DevServer } from "../bench/lib.ts";
import { findChromium, freePort } from "./browser-helpers.ts";

/**
 * The OAuth consent of the knowledge-base MCP endpoint in a real browser against `wrangler dev`: the
 * client's authorization URL opens the sign-in form, the member signs in, picks a knowledge base and
 * clicks Allow, and the browser lands on the client's callback with a code the client trades for a
 * token that lists the MCP tools. What only a browser checks: the `__Host-` consent cookie on http
 * loopback, the Origin a form POST carries under the page's Referrer-Policy, and a CSP that lets the
 * redirect to the client through.
 */
const chromiumPath = findChromium();
if (!chromiumPath) console.warn("OAuth consent browser test skipped: no Chromium (install Debian's `chromium` or set CHROMIUM_PATH)");

const b64url = (b: Buffer) => b.toString("base64url");

describe.skipIf(!chromiumPath)("OAuth consent in a browser", () => {
  let server: DevServer;
  let callback: http.Server;
  let browser: Browser;
  const arrived: string[] = [];

  beforeAll(async () => {
    server = await startDevServer({ port: await freePort() });
    callback = http.createServer((req, res) => {
      arrived.push(req.url ?? "");
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end("<!doctype html><title>Connected</title><p>You can close this window.</p>");
    });
    await new Promise<void>((r) => callback.listen(0, "127.0.0.1", r));
  });

  afterAll(async () => {
    await browser?.close();
    callback?.close();
    await server?.stop();
  });

  it("sign in, pick a knowledge base, Allow: the client gets a code that becomes a working token", async () => {
    const base = server.base;
    const email = `oauth-e2e-${Date.now()}@example.com`;
    const password = "browser-password-1";
    const signup = await api(base, "/auth/signup", { body: { email, password, name: "E2E" } });
    const cookie = /kb_session=[^;]+/.exec(signup.headers.get("set-cookie") ?? "")![0];
    const org = (await api(base, "/organizations", { cookie, body: { name: "E2E org", slug: `e2e-${Date.now()}` } })).body;
    const kb = (await api(base, "/knowledge-bases", { cookie, body: { tenant_id: org.default_tenant_id, name: "Handbook" } })).body;

    const redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    const reg = await fetch(`${base}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_name: "Browser client", redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] }),
    });
    expect(reg.status).toBe(201);
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const verifier = b64url(randomBytes(32));
    const authorize = new URL(`${base}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope: "kb:read", state: "s-123",
      code_challenge: b64url(createHash("sha256").update(verifier).digest()), code_challenge_method: "S256", resource: `${base}/api/v1/mcp`,
    })) authorize.searchParams.set(k, v);

    browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
    const tab = await (await browser.newContext()).newPage();
    await tab.goto(authorize.toString());
    await tab.getByLabel("Email").fill(email);
    await tab.getByLabel("Password").fill(password);
    await tab.getByRole("button", { name: "Sign in" }).click();
    await tab.getByRole("heading", { name: "Allow Browser client to read your knowledge bases?" }).waitFor();
    await tab.getByLabel("Handbook").check();
    await tab.getByRole("button", { name: "Allow" }).click();
    await tab.waitForURL((u) => u.toString().startsWith(redirectUri), { timeout: 15_000 });

    // (the browser also asks the callback server for /favicon.ico)
    const landed = new URL(arrived.find((u) => u.startsWith("/callback?"))!, redirectUri);
    expect(landed.searchParams.get("state")).toBe("s-123");
    const code = landed.searchParams.get("code")!;
    expect(code).toBeTruthy();
    const token = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier, resource: `${base}/api/v1/mcp` }),
    });
    expect(token.status).toBe(200);
    const { access_token } = (await token.json()) as { access_token: string };
    const tools = await fetch(`${base}/api/v1/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_knowledge_bases", arguments: {} } }),
    });
    expect(tools.status).toBe(200);
    expect(JSON.stringify(await tools.json())).toContain(kb.id);
  });
});
