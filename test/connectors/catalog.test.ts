import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CATALOG } from "../../src/services/connectors/catalog";
import { call, createKey, createOrg, expectError, expectStatus, signup } from "../helpers";
import { SLUGS } from "./helpers";
import { catalogEntry } from "../../src/services/connectors/listing";

describe("connector catalog", () => {
  it("pages through the six apps with their tools, each with a search tool", async () => {
    const user = await signup();
    const all = expectStatus(await call("/connectors/catalog?offset=0&limit=100", { cookie: user.cookie }), 200);
    expect(all.total).toBe(6);
    expect(all.connectors.map((c: any) => c.slug)).toEqual([...SLUGS]);
    for (const c of all.connectors) {
      expect(c).toMatchObject({ auth: "oauth2", available: true });
      expect(c.logo).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(c.name && c.description && c.category).toBeTruthy();
      expect(c.tools.map((t: any) => t.name)).toContain("search");
      expect(c.tools.length).toBeGreaterThanOrEqual(2);
    }
    const page = expectStatus(await call("/connectors/catalog?offset=2&limit=3", { cookie: user.cookie }), 200);
    expect(page).toMatchObject({ total: 6, offset: 2, limit: 3 });
    expect(page.connectors.map((c: any) => c.slug)).toEqual(["notion", "slack", "linear"]);
    const dflt = expectStatus(await call("/connectors/catalog", { cookie: user.cookie }), 200);
    expect(dflt).toMatchObject({ offset: 0, limit: 20, total: 6 });
    expect(expectStatus(await call("/connectors/catalog?offset=6", { cookie: user.cookie }), 200).connectors).toEqual([]);
    for (const bad of ["limit=0", "limit=101", "offset=-1", "limit=abc"]) expectError(await call(`/connectors/catalog?${bad}`, { cookie: user.cookie }), 400);
  });

  it("by-slugs answers the known ones, in the order asked, once each", async () => {
    const user = await signup();
    const r = expectStatus(await call("/connectors/catalog/by-slugs", { cookie: user.cookie, body: { slugs: ["jira", "nope", "github", "jira"] } }), 200);
    expect(r.connectors.map((c: any) => c.slug)).toEqual(["jira", "github"]);
    expectError(await call("/connectors/catalog/by-slugs", { cookie: user.cookie, body: { slugs: [] } }), 400);
    expectError(await call("/connectors/catalog/by-slugs", { cookie: user.cookie, body: { slugs: Array(101).fill("github") } }), 400);
    expectError(await call("/connectors/catalog/by-slugs", { cookie: user.cookie, body: {} }), 400);
  });

  it("available follows the configured client credentials", () => {
    const only = { ...env, CONNECTORS: JSON.stringify({ github: { client_id: "a", client_secret: "b" }, slack: { client_id: "a" } }) };
    expect(CATALOG.map((d) => [d.slug, catalogEntry(only, d).available])).toEqual([
      ["github", true], ["google-drive", false], ["notion", false], ["slack", false], ["linear", false], ["jira", false],
    ]);
    expect(CATALOG.every((d) => !catalogEntry({ ...env, CONNECTORS: "not json" }, d).available)).toBe(true);
    expect(CATALOG.every((d) => !catalogEntry({ ...env, CONNECTORS: undefined }, d).available)).toBe(true);
  });

  it("keys need connectors:read; anonymous callers are refused", async () => {
    const org = await createOrg();
    const without = await createKey(org, { scopes: ["documents:read"] });
    expectError(await call("/connectors/catalog", { key: without.key }), 403);
    expectError(await call("/connectors/catalog/by-slugs", { key: without.key, body: { slugs: ["github"] } }), 403);
    const withScope = await createKey(org, { scopes: ["connectors:read"] });
    expect(expectStatus(await call("/connectors/catalog", { key: withScope.key }), 200).total).toBe(6);
    expectError(await call("/connectors/catalog"), 401);
  });

  it("the real providers' endpoints are the defaults; CONNECTOR_ENDPOINTS is ignored in production", async () => {
    const { endpointsOf } = await import("../../src/services/connectors/config");
    const gh = CATALOG.find((d) => d.slug === "github")!;
    expect(endpointsOf({ ...env, ENVIRONMENT: "production" }, gh)).toEqual({
      authorize_url: "https://github.com/login/oauth/authorize",
      token_url: "https://github.com/login/oauth/access_token",
      api_base_url: "https://api.github.com",
    });
    expect(endpointsOf(env, gh).authorize_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/github\/oauth\/authorize$/);
    for (const d of CATALOG) for (const u of Object.values(d.endpoints)) expect(u).toMatch(/^https:\/\//);
  });
});
