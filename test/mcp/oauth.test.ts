import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { hmacSign } from "../../src/lib/crypto";
import { callServerTool } from "../../src/services/mcp/client";
import { call, createOrg, expectError, expectStatus, fetchWorker, unique, type TestOrg } from "../helpers";
import { captureLogs, mcpUrl, register, seen, settled, track } from "./mcp-helpers";

/** A registration behind its own OAuth realm of the local authorization server, authorized end to end. */
async function oauthServer(org: TestOrg, realm = unique("realm")) {
  const created = expectStatus(await register(org, { name: "OAuth Tools", url: mcpUrl(`/r/${realm}/mcp`) }), 201);
  const before = await settled(org, created.id);
  return { id: created.id as string, realm, before };
}

/** The test's browser: the cookies our flow URLs set, sent back to our callback. */
const browser = new Map<string, string>();

/**
 * POST .../oauth/start, then its authorization_url (on our origin) opened in `jar`'s browser: the
 * answer's authorization_url is replaced by where that redirects (the authorization server).
 */
async function start(org: TestOrg, id: string, body: Record<string, unknown> = {}, jar = browser) {
  const r = await track(call(`/mcp/servers/${id}/oauth/start?org_id=${org.id}`, { cookie: org.owner.cookie, method: "POST", body }));
  if (r.status !== 200) return r;
  const ours: string = r.body.authorization_url;
  expect(ours.startsWith("http://localhost:8787/api/v1/oauth-flows/"), ours).toBe(true);
  const res = await fetchWorker(ours, { redirect: "manual", headers: { Cookie: org.owner.cookie } });
  expect(res.status, await res.clone().text()).toBe(302);
  const m = /^([^=]+)=([^;]*)/.exec(res.headers.get("Set-Cookie") ?? "")!;
  jar.set(m[1], m[2]);
  r.body.flow_url = ours;
  r.body.authorization_url = res.headers.get("Location");
  return r;
}

/** The browser: follow authorization_url to the local AS (auto-approve); returns our callback URL with code and state. */
async function approve(authorizationUrl: string): Promise<URL> {
  const res = await fetch(authorizationUrl, { redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("Location")!);
}

async function callback(url: URL | string, jar = browser) {
  const res = await fetchWorker(url.toString(), { headers: { Cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } });
  const text = await res.text();
  seen.push(text);
  return { status: res.status, text, headers: res.headers };
}

async function connect(org: TestOrg, id: string) {
  const { authorization_url } = expectStatus(await start(org, id), 200);
  const back = await approve(authorization_url);
  const r = await callback(back);
  expect(r.status, r.text).toBe(200);
  return back;
}

const stats = async (realm: string) => (await (await fetch(mcpUrl(`/r/${realm}/admin/stats`))).json()) as Record<string, any>;
const admin = (realm: string, what: string, body: unknown = {}) => fetch(mcpUrl(`/r/${realm}/admin/${what}`), { method: "POST", body: JSON.stringify(body) });
const row = (id: string) => env.DB.prepare("SELECT * FROM mcp_servers WHERE id = ?").bind(id).first<Record<string, any>>();
const whoami = (id: string) => callServerTool(env, createDb(env.DB), id, "whoami", {}, new AbortController().signal);

describe("MCP OAuth (authorization spec: PRM, AS metadata, DCR, PKCE S256, refresh)", () => {
  const issued: string[] = [];
  const logs = captureLogs();
  afterAll(() => {
    expect(issued.length).toBeGreaterThan(0);
    for (const line of logs) for (const t of issued) expect(line).not.toContain(t);
    for (const text of seen) {
      expect(text).not.toMatch(/access_token|refresh_token|code_verifier/);
      for (const t of issued) expect(text).not.toContain(t);
    }
  });

  it("a server that asks for authorization is needs_auth; start → authorize → callback connects it", async () => {
    const org = await createOrg();
    const { id, realm, before } = await oauthServer(org);
    expect(before).toMatchObject({ status: "needs_auth", auth: "oauth", tool_count: 0 });
    expect(before.last_error).toMatch(/authoriz/i);

    const { authorization_url } = expectStatus(await start(org, id, { scope: "tools.read" }), 200);
    const u = new URL(authorization_url);
    expect(u.origin + u.pathname).toBe(mcpUrl(`/r/${realm}/authorize`));
    expect(u.searchParams.get("response_type")).toBe("code");
    expect(u.searchParams.get("code_challenge_method")).toBe("S256");
    expect(u.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(u.searchParams.get("redirect_uri")).toBe("http://localhost:8787/api/v1/mcp/servers/oauth/callback");
    expect(u.searchParams.get("resource")).toBe(mcpUrl(`/r/${realm}/mcp`));
    expect(u.searchParams.get("scope")).toBe("tools.read");
    expect(u.searchParams.get("state")).toMatch(new RegExp(`^${id}\\.`));
    expect((await stats(realm)).registrations).toBe(1); // dynamic client registration

    const back = await approve(authorization_url);
    expect(back.searchParams.get("code")).toBeTruthy();
    const page = await callback(back);
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toMatch(/text\/html/);
    expect(page.text).toMatch(/connected/i);
    expect(page.text).toMatch(/4 tool/);
    const st = await stats(realm);
    expect(st.codeExchanges).toBe(1);
    expect(st.lastTokenRequest).toMatchObject({ grant_type: "authorization_code", code_verifier: "[set]", resource: mcpUrl(`/r/${realm}/mcp`) });

    const s = await settled(org, id);
    expect(s).toMatchObject({ status: "ready", auth: "oauth", tool_count: 4, last_error: null });
    // Tokens are sealed: no plaintext token or verifier in the row.
    const r = await row(id);
    expect(r!.oauth_tokens_enc).toMatch(/^v1:/);
    expect(st.issued).toHaveLength(2);
    for (const t of st.issued) expect(JSON.stringify(r)).not.toContain(t);
    issued.push(...st.issued);
    expect(r!.oauth_verifier_enc).toBeNull();
    expect(r!.oauth_state_nonce).toBeNull();

    // The token works: the tool sees the user bound to it.
    expect(await whoami(id)).toEqual({ text: "hello, alice", isError: false });

    // Replaying the callback is refused (single-use state).
    const replay = await callback(back);
    expect(replay.status).toBe(400);
    expect(replay.text).toMatch(/already used/i);
    expect((await stats(realm)).codeExchanges).toBe(1);
  });

  it("tampered, expired, foreign and missing states are refused with an HTML page saying why", async () => {
    const org = await createOrg();
    const { id } = await oauthServer(org);
    const { authorization_url } = expectStatus(await start(org, id), 200);
    const back = await approve(authorization_url);
    const state = back.searchParams.get("state")!;
    const [sid, nonce, exp, sig] = state.split(".");

    const withState = (s: string) => {
      const u = new URL(back);
      u.searchParams.set("state", s);
      return u;
    };
    const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
    for (const bad of [`${sid}.${nonce}.${exp}.${flip(sig)}`, `${sid}.${flip(nonce)}.${exp}.${sig}`, `${sid}.${nonce}.${Number(exp) + 1}.${sig}`, "garbage", `x.${nonce}.${exp}.${sig}`]) {
      const r = await callback(withState(bad));
      expect(r.status, bad).toBe(400);
      expect(r.text).toMatch(/not connected/i);
    }
    // Correctly signed but expired (the test signs with the development secret the Worker uses in tests).
    const past = Date.now() - 1000;
    const expiredSig = await hmacSign("development-only-signing-secret-do-not-use-in-production", `mcp-oauth-state:${sid}:${nonce}:${past}`);
    const expired = await callback(withState(`${sid}.${nonce}.${past}.${expiredSig}`));
    expect(expired.status).toBe(400);
    expect(expired.text).toMatch(/10 minutes/);
    // A newer start replaces the pending one: the older state no longer works.
    expectStatus(await start(org, id), 200);
    const stale = await callback(back);
    expect(stale.status).toBe(400);
    expect(stale.text).toMatch(/already used|replaced/i);
    // Missing parameters, and an error from the authorization server.
    expect((await callback("/api/v1/mcp/servers/oauth/callback")).status).toBe(400);
    const denied = await callback("/api/v1/mcp/servers/oauth/callback?error=access_denied&state=x");
    expect(denied.status).toBe(400);
    expect(denied.text).toMatch(/access_denied/);
    expect((await settled(org, id)).status).toBe("needs_auth");
  });

  it("the page escapes what the authorization server sends", async () => {
    const r = await callback("/api/v1/mcp/servers/oauth/callback?error=x&error_description=%3Cscript%3Ealert(1)%3C%2Fscript%3E");
    expect(r.status).toBe(400);
    expect(r.text).not.toContain("<script>alert(1)</script>");
    expect(r.text).toContain("&lt;script&gt;");
  });

  it("tokens refresh before they expire, ONE refresh for concurrent calls (a reused refresh token would revoke the grant)", async () => {
    const org = await createOrg();
    const { id, realm } = await oauthServer(org);
    await connect(org, id);
    const before = await row(id);
    // The access token is about to expire (within the refresh margin).
    await env.DB.prepare("UPDATE mcp_servers SET oauth_token_expires_at = ? WHERE id = ?").bind(Date.now() + 5_000, id).run();
    const results = await Promise.all([whoami(id), whoami(id), whoami(id), whoami(id)]);
    for (const r of results) expect(r).toEqual({ text: "hello, alice", isError: false });
    const st = await stats(realm);
    expect(st.refreshes).toBe(1);
    expect(st.refreshReuse).toBe(0);
    const after = await row(id);
    expect(after!.oauth_token_version).toBe(before!.oauth_token_version + 1);
    expect(after!.oauth_tokens_enc).not.toBe(before!.oauth_tokens_enc);
    expect(after!.oauth_token_expires_at).toBeGreaterThan(Date.now() + 3_000_000);
    expect(after!.refresh_lease_until).toBeNull();
    for (const t of st.issued) expect(JSON.stringify(after)).not.toContain(t);
    issued.push(...st.issued);
  });

  it("a 401 from the server is answered with one refresh and a retry", async () => {
    const org = await createOrg();
    const { id, realm } = await oauthServer(org);
    await connect(org, id);
    await admin(realm, "revoke-access"); // the server forgets every access token; ours still looks valid
    expect(await whoami(id)).toEqual({ text: "hello, alice", isError: false });
    expect((await stats(realm)).refreshes).toBe(1);
    expect((await settled(org, id)).status).toBe("ready");
  });

  it("a refused refresh makes the registration needs_auth, and the tool result says so", async () => {
    const org = await createOrg();
    const { id, realm } = await oauthServer(org);
    await connect(org, id);
    await admin(realm, "config", { refuse_refresh: true });
    await admin(realm, "revoke-access");
    const r = await whoami(id);
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/authoriz|connect/i);
    const s = await settled(org, id);
    expect(s.status).toBe("needs_auth");
    // Reconnecting works again.
    await admin(realm, "config", { refuse_refresh: false });
    await connect(org, id);
    expect((await settled(org, id)).status).toBe("ready");
    expect(await whoami(id)).toEqual({ text: "hello, alice", isError: false });
  });

  it("start on a server that needs no authorization is 409; a viewer and other organizations cannot start", async () => {
    const org = await createOrg();
    const open = expectStatus(await register(org, { name: "Open", url: mcpUrl("/open/mcp") }), 201);
    await settled(org, open.id);
    expectError(await start(org, open.id), 409);
    const stranger = await createOrg();
    const { id } = await oauthServer(org);
    expectError(await track(call(`/mcp/servers/${id}/oauth/start?org_id=${org.id}`, { cookie: stranger.owner.cookie, method: "POST", body: {} })), 404);
  });
});
