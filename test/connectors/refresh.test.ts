import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, expectError, signup } from "../helpers";
import { connect, providerLog, runTool, SLUGS, statuses, turnTools } from "./helpers";

const tokenOf = async (userId: string, slug: string) =>
  (await env.DB.prepare("SELECT access_token, token_expires_at FROM connector_connections WHERE owner_key = ? AND slug = ?").bind(`user:${userId}`, slug).first<{ access_token: string; token_expires_at: string | null }>())!;

describe("tokens: refresh on expiry, refresh failures, disconnect with revocation", () => {
  it.each(["google-drive", "notion", "slack", "linear", "jira"])("%s: an access token about to expire is refreshed before the call", async (slug) => {
    const user = await signup();
    await connect({ cookie: user.cookie }, slug, {}, { test_expires_in: "30" }); // inside the one-minute margin
    const before = await tokenOf(user.id, slug);
    const refreshesBefore = (await providerLog()).refreshes.length;
    const { tools, scope } = await turnTools(`user:${user.id}`, "t", [slug]);
    const r = await runTool(tools, scope, `app__${slug}__search`, { query: "refund policy" });
    expect(r.isError, r.text).toBeFalsy();
    expect(r.passages!.length).toBeGreaterThan(0);
    const log = await providerLog();
    expect(log.refreshes.length).toBe(refreshesBefore + 1);
    expect(log.refreshes.at(-1)).toBe(`${slug}:alice`);
    const after = await tokenOf(user.id, slug);
    expect(after.access_token).not.toBe(before.access_token);
    expect(Date.parse(after.token_expires_at!)).toBeGreaterThan(Date.now() + 3000_000);
    // The next call uses the refreshed token without refreshing again.
    await runTool(tools, scope, `app__${slug}__search`, { query: "refund policy" });
    expect((await providerLog()).refreshes.length).toBe(refreshesBefore + 1);
    expect((await statuses({ cookie: user.cookie }, [slug]))[0]).toMatchObject({ connected: true, reason: null });
  });

  it("concurrent calls on an expiring connection refresh it once", async () => {
    const user = await signup();
    await connect({ cookie: user.cookie }, "linear", {}, { test_expires_in: "30" });
    const before = (await providerLog()).refreshes.filter((r) => r === "linear:alice").length;
    const { tools, scope } = await turnTools(`user:${user.id}`, "t", ["linear"]);
    const results = await Promise.all([0, 1, 2, 3].map(() => runTool(tools, scope, "app__linear__search", { query: "deploy checklist" })));
    for (const r of results) expect(r.isError, r.text).toBeFalsy();
    expect((await providerLog()).refreshes.filter((r) => r === "linear:alice").length).toBe(before + 1);
  });

  it.each([
    ["revoked", "revoked"],
    ["expired", "expired"],
    ["scope", "scope_missing"],
  ])("a refresh refused as %s marks the connection (%s) and the tool result says so", async (knob, reason) => {
    const user = await signup();
    await connect({ cookie: user.cookie }, "google-drive", {}, { test_expires_in: "30", test_refresh_error: knob });
    const { tools, scope } = await turnTools(`user:${user.id}`, "t", ["google-drive"]);
    const r = await runTool(tools, scope, "app__google-drive__search", { query: "refund" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("connect it again");
    expect(r.passages ?? []).toEqual([]);
    const [st] = await statuses({ cookie: user.cookie }, ["google-drive"]);
    expect(st).toMatchObject({ slug: "google-drive", connected: false, status: "disconnected", reason, account: "alice@acme.test" });
    // Connecting again clears it.
    await connect({ cookie: user.cookie }, "google-drive");
    expect((await statuses({ cookie: user.cookie }, ["google-drive"]))[0]).toMatchObject({ connected: true, status: "connected", reason: null });
  });

  it("Slack's ok:false refresh refusal is read as a refusal too", async () => {
    const user = await signup();
    await connect({ cookie: user.cookie }, "slack", {}, { test_expires_in: "30", test_refresh_error: "revoked" });
    const { tools, scope } = await turnTools(`user:${user.id}`, "t", ["slack"]);
    expect((await runTool(tools, scope, "app__slack__search", { query: "refund" })).isError).toBe(true);
    expect((await statuses({ cookie: user.cookie }, ["slack"]))[0]).toMatchObject({ connected: false, reason: "revoked" });
  });

  it("a token the provider no longer accepts, with nothing to refresh it, is revoked", async () => {
    const user = await signup();
    await connect({ cookie: user.cookie }, "github");
    // Revoke at the provider behind our back: the double forgets the token.
    const { testServer } = await import("../helpers");
    const row = await tokenOf(user.id, "github");
    expect(row.token_expires_at).toBeNull(); // GitHub OAuth app tokens do not expire
    const { decryptSecret } = await import("../../src/lib/secrets");
    const id = (await env.DB.prepare("SELECT id FROM connector_connections WHERE owner_key = ?").bind(`user:${user.id}`).first<{ id: string }>())!.id;
    const token = await decryptSecret(env, row.access_token, `connector_connection:${id}`);
    const gone = await fetch(`${testServer("connectors")}/github/api/applications/github-client/grant`, {
      method: "DELETE",
      headers: { Authorization: `Basic ${btoa("github-client:github-secret")}`, "Content-Type": "application/json" },
      body: JSON.stringify({ access_token: token }),
    });
    expect(gone.status).toBe(204);
    const { tools, scope } = await turnTools(`user:${user.id}`, "t", ["github"]);
    const r = await runTool(tools, scope, "app__github__search", { query: "refund" });
    expect(r.isError).toBe(true);
    expect((await statuses({ cookie: user.cookie }, ["github"]))[0]).toMatchObject({ connected: false, reason: "revoked" });
  });

  it.each(SLUGS)("%s: disconnect deletes the connection and revokes at the provider where it can", async (slug) => {
    const user = await signup();
    await connect({ cookie: user.cookie }, slug);
    const revocationsBefore = (await providerLog()).revocations.filter((r) => r.startsWith(`${slug}:`)).length;
    const r = await call(`/connectors/${slug}`, { cookie: user.cookie, method: "DELETE" });
    expect(r.status).toBe(204);
    expect((await statuses({ cookie: user.cookie }, [slug]))[0]).toMatchObject({ connected: false, status: "not_connected", account: null });
    const after = (await providerLog()).revocations.filter((x) => x.startsWith(`${slug}:`)).length;
    // Atlassian offers no revocation endpoint for 3LO apps; every other provider is told.
    expect(after).toBe(slug === "jira" ? revocationsBefore : revocationsBefore + 1);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM connector_connections WHERE owner_key = ?").bind(`user:${user.id}`).first<{ n: number }>())!.n).toBe(0);
    expectError(await call(`/connectors/${slug}`, { cookie: user.cookie, method: "DELETE" }), 404);
  });

  it("unknown slugs and unconnected apps cannot be disconnected", async () => {
    const user = await signup();
    expectError(await call("/connectors/myspace", { cookie: user.cookie, method: "DELETE" }), 404);
    expectError(await call("/connectors/github", { cookie: user.cookie, method: "DELETE" }), 404);
  });
});
