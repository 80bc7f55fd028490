import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { API, call, createKey, createOrg, expectError, expectStatus, signup, unique } from "../helpers";

describe("identity: signup, login, logout, sessions, /me", () => {
  it("signs up, sets a secure-by-default session cookie and hashes the password", async () => {
    const email = `${unique("ada")}@Example.com`;
    const r = await call("/auth/signup", { body: { email, password: "correct-horse-battery", name: "Ada" } });
    expectStatus(r, 201);
    expect(r.body.user.email).toBe(email.toLowerCase());
    const cookie = r.headers.get("Set-Cookie")!;
    expect(cookie).toMatch(/kb_session=[A-Za-z0-9_-]{40,}/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Max-Age=2592000/);
    const row = await env.DB.prepare("SELECT password_hash, password_salt FROM users WHERE id = ?").bind(r.body.user.id).first<any>();
    expect(row.password_hash).not.toContain("correct-horse");
    expect(row.password_salt.length).toBeGreaterThan(10);
    // The session token is stored only as a hash.
    const token = /kb_session=([^;]+)/.exec(cookie)![1];
    const stored = await env.DB.prepare("SELECT token_hash FROM sessions WHERE user_id = ?").bind(r.body.user.id).first<any>();
    expect(stored.token_hash).not.toBe(token);
  });

  it("refuses duplicate emails, short passwords and bad emails", async () => {
    const u = await signup();
    expectError(await call("/auth/signup", { body: { email: u.email.toUpperCase(), password: "another-long-one" } }), 409, "email_taken");
    const short = expectError(await call("/auth/signup", { body: { email: `${unique()}@x.io`, password: "short" } }), 400);
    expect(short.details![0].path).toBe("body.password");
    expectError(await call("/auth/signup", { body: { email: "not-an-email", password: "long-enough-pass" } }), 400);
  });

  it("logs in with the right pair and refuses the wrong one with 401", async () => {
    const u = await signup(undefined, "a-very-good-password");
    const ok = await call("/auth/login", { body: { email: u.email, password: "a-very-good-password" } });
    expectStatus(ok, 200);
    expect(ok.headers.get("Set-Cookie")).toContain("kb_session=");
    expectError(await call("/auth/login", { body: { email: u.email, password: "wrong-password!" } }), 401, "unauthorized");
    expectError(await call("/auth/login", { body: { email: "nobody@nowhere.io", password: "whatever-pass" } }), 401, "unauthorized");
  });

  it("throttles repeated failed logins for one email with 429 and Retry-After", async () => {
    const u = await signup(undefined, "the-real-password");
    for (let i = 0; i < 10; i++) {
      expectError(await call("/auth/login", { body: { email: u.email, password: `wrong-${i}-xxxxx` } }), 401);
    }
    const blocked = await call("/auth/login", { body: { email: u.email, password: "the-real-password" } });
    expectError(blocked, 429, "rate_limited");
    expect(Number(blocked.headers.get("Retry-After"))).toBeGreaterThan(0);
    // Another account is not affected.
    const other = await signup(undefined, "other-password-1");
    expectStatus(await call("/auth/login", { body: { email: other.email, password: "other-password-1" } }), 200);
  });

  it("throttles signups per client address when configured", async () => {
    const throttled = { ...env, SIGNUP_THROTTLE_MAX: "2" };
    const ip = `203.0.113.${Math.floor(Math.random() * 200)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const ctx = createExecutionContext();
      const res = await worker.fetch(
        new Request(`${API}/auth/signup`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip },
          body: JSON.stringify({ email: `${unique()}@example.com`, password: "correct-horse-battery" }),
        }),
        throttled,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      statuses.push(res.status);
    }
    expect(statuses).toEqual([201, 201, 429]);
  });

  it("logout revokes the session server-side", async () => {
    const u = await signup();
    expectStatus(await call("/me", { cookie: u.cookie }), 200);
    const out = await call("/auth/logout", { cookie: u.cookie, method: "POST" });
    expect(out.status).toBe(204);
    expectError(await call("/me", { cookie: u.cookie }), 401, "unauthorized");
  });

  it("treats unknown or malformed credentials as 401", async () => {
    expectError(await call("/me"), 401, "unauthorized");
    expectError(await call("/me", { cookie: "kb_session=forged-token-value-that-is-long" }), 401);
    expectError(await call("/me", { headers: { Authorization: "Basic abc" } }), 401);
    expectError(await call("/me", { key: "kbk_not-a-real-key" }), 401);
    expectError(await call("/me", { key: "sk-something-else" }), 401);
  });

  it("GET /me describes a user with their organizations, or an API key", async () => {
    const org = await createOrg();
    const me = expectStatus(await call("/me", { cookie: org.owner.cookie }), 200);
    expect(me.type).toBe("user");
    expect(me.user.email).toBe(org.owner.email);
    expect(me.organizations).toEqual([{ id: org.id, name: `Org ${org.slug}`, slug: org.slug, role: "owner" }]);

    const { key, id } = await createKey(org, { scopes: ["tenants:read"], tenant_ids: [org.tenantId] });
    const km = expectStatus(await call("/me", { key }), 200);
    expect(km).toEqual({
      type: "api_key",
      api_key: {
        id,
        name: expect.any(String),
        organization_id: org.id,
        environment_id: org.envId,
        scopes: ["tenants:read"],
        tenant_ids: [org.tenantId],
        knowledge_base_id: null,
      },
    });
  });

  it("refuses API keys on user-only routes with 403", async () => {
    const org = await createOrg();
    const { key } = await createKey(org, { scopes: ["admin:full"] });
    expectError(await call("/organizations", { key }), 403, "forbidden");
    expectError(await call(`/organizations/${org.id}`, { key }), 403, "forbidden");
    expectError(await call("/auth/logout", { key, method: "POST" }), 403, "forbidden");
    expectError(await call(`/environments/${org.envId}/api-keys`, { key }), 403, "forbidden");
  });
});
