import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { API, type ApiResponse, createKey, createOrg, expectError } from "../helpers";

/**
 * The Worker with RATE_LIMITER replaced by TEST_RATE_LIMITER (3 requests a
 * minute per key, test/vitest.config.ts), through the whole app.
 */
async function limitedCall(path: string, headers: Record<string, string>, overrides: Record<string, unknown> = {}): Promise<ApiResponse> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${API}${path}`, { headers }), { ...env, RATE_LIMITER: env.TEST_RATE_LIMITER, ...overrides } as any, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, res };
}

describe("per-caller rate limiting", () => {
  it("refuses a key over its budget with 429 rate_limited and Retry-After; other keys and users keep theirs", async () => {
    const org = await createOrg();
    const a = await createKey(org, { scopes: ["tenants:read"] });
    const b = await createKey(org, { scopes: ["tenants:read"] });
    const asA = { Authorization: `Bearer ${a.key}` };
    for (let i = 0; i < 3; i++) expect((await limitedCall("/me", asA)).status).toBe(200);
    const refused = await limitedCall("/me", asA);
    const err = expectError(refused, 429, "rate_limited");
    expect(err.message).toMatch(/API key/);
    expect(refused.headers.get("Retry-After")).toBe("10");

    // Budgets are per caller: another key of the same organization, and the owner's session, are unaffected.
    expect((await limitedCall("/me", { Authorization: `Bearer ${b.key}` })).status).toBe(200);
    expect((await limitedCall("/me", { Cookie: org.owner.cookie })).status).toBe(200);
  });

  it("counts signed-in users too", async () => {
    const org = await createOrg();
    const asOwner = { Cookie: org.owner.cookie };
    for (let i = 0; i < 3; i++) expect((await limitedCall(`/organizations/${org.id}`, asOwner)).status).toBe(200);
    const refused = await limitedCall(`/organizations/${org.id}`, asOwner);
    expect(expectError(refused, 429, "rate_limited").message).toMatch(/user/);
  });

  it("does not count anonymous requests, which still get 401", async () => {
    for (let i = 0; i < 5; i++) expectError(await limitedCall("/me", {}), 401, "unauthorized");
  });

  it("RATE_LIMITS=off turns it off; a failing limiter lets requests through", async () => {
    const org = await createOrg();
    const k = await createKey(org, { scopes: ["tenants:read"] });
    const auth = { Authorization: `Bearer ${k.key}` };
    for (let i = 0; i < 5; i++) expect((await limitedCall("/me", auth, { RATE_LIMITS: "off" })).status).toBe(200);
    const broken = { limit: async () => Promise.reject(new Error("limiter down")) };
    for (let i = 0; i < 5; i++) expect((await limitedCall("/me", auth, { RATE_LIMITER: broken })).status).toBe(200);
  });
});
