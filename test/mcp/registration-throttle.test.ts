import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env";
import { countRegistration, registrationRefusal } from "../../src/services/mcp-oauth/registration-throttle";
import { fetchWorker } from "../helpers";

/**
 * OAuth dynamic client registration (POST /oauth/register) is open and anonymous, and each client is stored:
 * registrations are throttled per client address (OAUTH_REGISTER_THROTTLE_MAX per window; the tests' limit is
 * 1000, test/vitest.config.ts), and only those that succeed count.
 */
const client = { client_name: "Desk app", redirect_uris: ["https://app.example/callback"], token_endpoint_auth_method: "none" };
const registerFrom = (address: string, body: object = client) =>
  fetchWorker("/oauth/register", { method: "POST", headers: { "Content-Type": "application/json", "CF-Connecting-IP": address }, body: JSON.stringify(body) });
const counted = async (address: string) =>
  Number(await env.DB.prepare("SELECT count(*) AS n FROM auth_throttle WHERE kind = 'oauth_register' AND subject = ?").bind(address).first("n"));

describe("OAuth client registration is throttled per client address", () => {
  it("counts registrations that succeed, and refuses an address at its limit with 429, Retry-After and an OAuth error body", async () => {
    const address = `203.0.113.${Math.floor(Math.random() * 250)}-${crypto.randomUUID()}`;
    const ok = await registerFrom(address);
    expect(ok.status, await ok.clone().text()).toBe(201);
    expect(((await ok.json()) as { client_id: string }).client_id).toBeTruthy();
    await expect.poll(() => counted(address)).toBe(1);
    // A registration the provider refuses (no redirect URI) does not count.
    expect((await registerFrom(address, { client_name: "broken" })).status).toBe(400);
    expect(await counted(address)).toBe(1);
    // At the limit (1000 in the tests): refused before the provider stores anything.
    await env.DB.prepare(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 999) INSERT INTO auth_throttle (kind, subject, created_at) SELECT 'oauth_register', ?, ? FROM n",
    ).bind(address, new Date().toISOString()).run();
    const refused = await registerFrom(address);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual({ error: "temporarily_unavailable", error_description: "Too many client registrations from this address; try again later" });
    expect(await counted(address)).toBe(1000);
    // Another address is not affected.
    expect((await registerFrom(`${address}-other`)).status).toBe(201);
  });

  it("follows its configuration: a limit of 2, and 0 for none", async () => {
    const address = `198.51.100.7-${crypto.randomUUID()}`;
    const req = () => new Request("http://localhost/oauth/register", { method: "POST", headers: { "CF-Connecting-IP": address } });
    const two = { ...env, OAUTH_REGISTER_THROTTLE_MAX: "2" } as Env;
    for (let i = 0; i < 2; i++) {
      expect(await registrationRefusal(req(), two)).toBeNull();
      await countRegistration(req(), two, new Response(null, { status: 201 }));
    }
    expect((await registrationRefusal(req(), two))?.status).toBe(429);
    const none = { ...env, OAUTH_REGISTER_THROTTLE_MAX: "0" } as Env;
    expect(await registrationRefusal(req(), none)).toBeNull();
  });
});
