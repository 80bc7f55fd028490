import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signingSecret } from "../../src/lib/config";
import { hmacSign } from "../../src/lib/crypto";
import { signState, verifyState, type StatePayload } from "../../src/services/connectors/oauth";
import { call, createKey, createOrg, expectError, expectStatus, signup } from "../helpers";
import { approve, callback, connect, DONE, providerLog, SLUGS, startAdd, statuses } from "./helpers";

const EXPECTED_ACCOUNT: Record<string, string> = {
  github: "alice-gh",
  "google-drive": "alice@acme.test",
  notion: "alice@acme.test",
  slack: "alice@Acme",
  linear: "alice@acme.test",
  jira: "alice@acme.test",
};

async function connectionRows(ownerKey: string) {
  return (await env.DB.prepare("SELECT * FROM connector_connections WHERE owner_key = ?").bind(ownerKey).all()).results as any[];
}

describe("connecting an app: add → provider → callback → status", () => {
  it.each(SLUGS)("%s: the full OAuth round trip against its local double", async (slug) => {
    const user = await signup();
    const before = await statuses({ cookie: user.cookie }, [slug]);
    expect(before).toEqual([{ slug, connected: false, status: "not_connected", reason: null, account: null, connected_at: null }]);

    const add = await startAdd({ cookie: user.cookie }, slug);
    expect(add.already_connected).toBe(false);
    const auth = new URL(add.redirect_url);
    expect(auth.searchParams.get("client_id")).toBe(`${slug}-client`);
    expect(auth.searchParams.get("redirect_uri")).toBe("http://localhost:8787/api/v1/connectors/auth/callback");
    expect(auth.searchParams.get("response_type")).toBe("code");
    const pkce = ["github", "google-drive", "linear"].includes(slug);
    expect(auth.searchParams.get("code_challenge_method")).toBe(pkce ? "S256" : null);
    expect(!!auth.searchParams.get("code_challenge")).toBe(pkce);

    // The pending authorization holds the PKCE verifier sealed, never in the clear.
    const stateId = JSON.parse(atob(auth.searchParams.get("state")!.split(".")[0].replace(/-/g, "+").replace(/_/g, "/"))).n;
    const pending = await env.DB.prepare("SELECT code_verifier FROM connector_oauth_states WHERE id = ?").bind(stateId).first<{ code_verifier: string | null }>();
    if (pkce) expect(pending!.code_verifier).toMatch(/^v1:[^:]+:[^:]+:[^:]+$/);
    else expect(pending!.code_verifier).toBeNull();

    const back = await approve(add.redirect_url);
    expect(back.startsWith("http://localhost:8787/api/v1/connectors/auth/callback?")).toBe(true);
    const cb = await callback(back);
    expect(cb.status).toBe(302);
    expect(cb.location!.origin + cb.location!.pathname).toBe(DONE);
    expect(Object.fromEntries(cb.location!.searchParams)).toEqual({ status: "connected", slug });
    expect(await env.DB.prepare("SELECT id FROM connector_oauth_states WHERE id = ?").bind(stateId).first()).toBeNull();

    const [st] = await statuses({ cookie: user.cookie }, [slug]);
    expect(st).toMatchObject({ slug, connected: true, status: "connected", reason: null, account: EXPECTED_ACCOUNT[slug] });
    expect(Date.parse(st.connected_at!)).toBeGreaterThan(Date.now() - 60_000);

    // The PKCE verifier went to the token endpoint exactly where the provider supports PKCE.
    const exchange = (await providerLog()).tokenRequests.filter((t) => t.slug === slug && t.grant_type === "authorization_code").at(-1);
    if (slug !== "github") expect(exchange?.has_verifier).toBe(pkce ? "yes" : "no");

    // Tokens are sealed at rest (AES-GCM envelope), never in the clear, never in a response.
    const [row] = await connectionRows(`user:${user.id}`);
    expect(row.access_token).toMatch(/^v1:[^:]+:[^:]+:[^:]+$/);
    expect(row.access_token).not.toContain(`${slug}-at-`);
    if (row.refresh_token) expect(row.refresh_token).not.toContain(`${slug}-rt-`);
    expect(JSON.stringify(st)).not.toContain("-at-");

    // Adding again says so (and offers a fresh authorization to reconnect).
    expect((await startAdd({ cookie: user.cookie }, slug)).already_connected).toBe(true);
  });

  it("reconnecting replaces the connection (one per owner and app) with the newly approved account", async () => {
    const user = await signup();
    await connect({ cookie: user.cookie }, "github");
    await connect({ cookie: user.cookie }, "github", {}, { test_account: "bob" });
    expect((await statuses({ cookie: user.cookie }, ["github"]))[0].account).toBe("bob-gh");
    expect(await connectionRows(`user:${user.id}`)).toHaveLength(1);
  });

  it("a provider refusal comes back as status=error with the reason, and nothing is connected", async () => {
    const user = await signup();
    const add = await startAdd({ cookie: user.cookie }, "notion");
    const cb = await callback(await approve(add.redirect_url, { test_deny: "1" }));
    expect(cb.status).toBe(302);
    expect(Object.fromEntries(cb.location!.searchParams)).toEqual({ status: "error", slug: "notion", error: "access_denied" });
    expect((await statuses({ cookie: user.cookie }, ["notion"]))[0].connected).toBe(false);
  });

  it("a Jira account without any Jira site is refused as scope_missing", async () => {
    const user = await signup();
    const add = await startAdd({ cookie: user.cookie }, "jira");
    const cb = await callback(await approve(add.redirect_url, { test_no_site: "1" }));
    expect(Object.fromEntries(cb.location!.searchParams)).toEqual({ status: "error", slug: "jira", error: "scope_missing" });
    expect((await statuses({ cookie: user.cookie }, ["jira"]))[0].connected).toBe(false);
  });

  it("a replayed callback is refused and connects nothing more", async () => {
    const user = await signup();
    const add = await startAdd({ cookie: user.cookie }, "linear");
    const back = await approve(add.redirect_url);
    expect((await callback(back)).status).toBe(302);
    // Disconnect, then replay the very same callback URL: the state was single-use.
    expect((await call("/connectors/linear", { cookie: user.cookie, method: "DELETE" })).status).toBe(204);
    const replay = await callback(back);
    expectError({ status: replay.status, body: replay.body, headers: new Headers({ "X-Request-Id": replay.body?.error?.request_id ?? "" }), res: null as any }, 400, "invalid_request");
    expect(replay.location).toBeNull();
    expect((await statuses({ cookie: user.cookie }, ["linear"]))[0].connected).toBe(false);
  });

  it("a tampered state is refused: changed owner, changed destination, forged signature, garbage", async () => {
    const victim = await signup();
    const attacker = await signup();
    const add = await startAdd({ cookie: attacker.cookie }, "slack");
    const back = new URL(await approve(add.redirect_url));
    const state = back.searchParams.get("state")!;
    const [body, sig] = state.split(".");
    const payload = JSON.parse(atob(body.replace(/-/g, "+").replace(/_/g, "/"))) as StatePayload;

    const reencode = (p: object) => btoa(JSON.stringify(p)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const variants = [
      `${reencode({ ...payload, o: `user:${victim.id}` })}.${sig}`, // someone else's account as the owner
      `${reencode({ ...payload, r: "https://evil.example/steal" })}.${sig}`, // another destination
      `${body}.${sig.slice(0, -2)}AA`, // signature changed
      `${body}.${await hmacSign("not-our-secret", `connector-oauth-state:v1:${body}`)}`,
      "garbage",
      "",
    ];
    for (const v of variants) {
      const u = new URL(back);
      u.searchParams.set("state", v);
      const r = await callback(u.toString());
      expect(r.status, v).toBe(400);
      expect(r.body.error.code).toBe("invalid_request");
      expect(r.location).toBeNull();
    }
    const noState = new URL(back);
    noState.searchParams.delete("state");
    expect((await callback(noState.toString())).status).toBe(400);
    expect((await statuses({ cookie: victim.cookie }, ["slack"]))[0].connected).toBe(false);
    expect((await statuses({ cookie: attacker.cookie }, ["slack"]))[0].connected).toBe(false);
    // The genuine state still works once (the forgeries did not consume it).
    expect((await callback(back.toString())).location!.searchParams.get("status")).toBe("connected");
    expect((await statuses({ cookie: victim.cookie }, ["slack"]))[0].connected).toBe(false);
  });

  it("an expired state is refused (validly signed, past its 10 minutes), and connects nothing", async () => {
    const user = await signup();
    const add = await startAdd({ cookie: user.cookie }, "github");
    const back = new URL(await approve(add.redirect_url));
    const [body] = back.searchParams.get("state")!.split(".");
    const payload = JSON.parse(atob(body.replace(/-/g, "+").replace(/_/g, "/"))) as StatePayload;
    expect(payload.e - Date.now() / 1000).toBeGreaterThan(590);
    expect(payload.e - Date.now() / 1000).toBeLessThanOrEqual(600);
    back.searchParams.set("state", await signState(env, { ...payload, e: Math.floor(Date.now() / 1000) - 1 }));
    const r = await callback(back.toString());
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain("expired");
    expect((await statuses({ cookie: user.cookie }, ["github"]))[0].connected).toBe(false);
    // verifyState agrees on the boundary, and the signing key is the configured one.
    expect(await verifyState(env, await signState(env, { ...payload, e: 1000 }), 1000)).toEqual({ refused: "expired" });
    expect(signingSecret(env)).toBeTruthy();
  });

  it("refuses bad input to add: unknown slug, unsafe redirect_url, unconfigured app", async () => {
    const user = await signup();
    const auth = { cookie: user.cookie };
    expectError(await call("/connectors/add", { ...auth, body: { slug: "myspace", redirect_url: DONE } }), 400);
    for (const bad of ["http://app.example.com/x", "javascript:alert(1)", "ftp://x.example/", "not a url", "https://u:p@app.example.com/"]) {
      expectError(await call("/connectors/add", { ...auth, body: { slug: "github", redirect_url: bad } }), 400);
    }
    // Outside production, local development destinations are fine.
    for (const ok of ["http://localhost:3000/done", "http://127.0.0.1:5173/cb"]) {
      expectStatus(await call("/connectors/add", { ...auth, body: { slug: "github", redirect_url: ok } }), 200);
    }
    expectError(await call("/connectors/add", { ...auth, body: { slug: "github" } }), 400);
    expectError(await call("/connectors/status", { ...auth, body: { slugs: ["github", "nope"] } }), 400);
    expectError(await call("/connectors/status", { ...auth, body: { slugs: [] } }), 400);
    // An app whose OAuth client is not configured cannot be added.
    const { startConnect } = await import("../../src/services/connectors/connect");
    const { userOwner } = await import("../../src/services/connectors/connections");
    const { createDb } = await import("../../src/db/client");
    const unconfigured = { ...env, CONNECTORS: JSON.stringify({ github: { client_id: "x", client_secret: "y" } }) };
    await expect(startConnect({ db: createDb(env.DB), env: unconfigured }, userOwner(user.id), "jira", DONE)).rejects.toThrow(/not available/);
  });

  it("the final destination keeps its own query and gets status and slug added", async () => {
    const user = await signup();
    const add = await startAdd({ cookie: user.cookie }, "google-drive", {}, "http://localhost:5173/settings?tab=apps");
    const cb = await callback(await approve(add.redirect_url));
    expect(Object.fromEntries(cb.location!.searchParams)).toEqual({ tab: "apps", status: "connected", slug: "google-drive" });
  });

  it("keys connect for a tenant's end user and need connectors:write", async () => {
    const org = await createOrg();
    const reader = await createKey(org, { scopes: ["connectors:read"] });
    const writer = await createKey(org, { scopes: ["connectors:read", "connectors:write"] });
    const owner = { tenant_id: org.tenantId, external_subject_id: "end-user-1" };
    expectError(await call("/connectors/add", { key: reader.key, body: { slug: "github", redirect_url: DONE, ...owner } }), 403);
    await connect({ key: writer.key }, "github", owner);
    const [st] = await statuses({ key: reader.key }, ["github"], owner);
    expect(st).toMatchObject({ connected: true, account: "alice-gh" });
  });
});
