import { describe, expect, it } from "vitest";
import { API, call, createOrg, expectError, fetchWorker, signup } from "../helpers";

describe("platform: errors, request ids, OpenAPI, explorer", () => {
  it("answers unknown routes with a JSON 404 carrying the request id", async () => {
    const r = await call("/definitely-not-a-route");
    const err = expectError(r, 404, "not_found");
    expect(err.message).toContain("/api/v1/definitely-not-a-route");
    expect(r.headers.get("X-Request-Id")).toBeTruthy();
  });

  it("puts X-Request-Id on successes and errors alike", async () => {
    const ok = await fetchWorker("/health");
    expect(ok.headers.get("X-Request-Id")).toMatch(/.+/);
    const u = await signup();
    const me = await call("/me", { cookie: u.cookie });
    expect(me.headers.get("X-Request-Id")).toMatch(/.+/);
  });

  it("refuses malformed JSON, non-JSON bodies and wrong types with 400 invalid_request", async () => {
    const u = await signup();
    const bad = await call("/organizations", {
      cookie: u.cookie,
      method: "POST",
      raw: '{"name": "x",',
      headers: { "Content-Type": "application/json" },
    });
    expectError(bad, 400, "invalid_request");

    const form = await call("/organizations", {
      cookie: u.cookie,
      method: "POST",
      raw: "name=x&slug=y",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expectError(form, 400, "invalid_request");

    const noType = await call("/organizations", { cookie: u.cookie, method: "POST", raw: '{"name":"x","slug":"y"}' });
    expectError(noType, 400, "invalid_request");

    const types = await call("/organizations", { cookie: u.cookie, body: { name: 42, slug: ["a"], type: "galactic" } });
    const err = expectError(types, 400, "invalid_request");
    const paths = err.details!.map((d) => d.path).sort();
    expect(paths).toEqual(["body.name", "body.slug", "body.type"]);
  });

  it("names missing fields and oversize strings", async () => {
    const u = await signup();
    const missing = await call("/organizations", { cookie: u.cookie, body: {} });
    const e1 = expectError(missing, 400, "invalid_request");
    expect(e1.details!.map((d) => d.path).sort()).toEqual(["body.name", "body.slug"]);

    const long = await call("/organizations", { cookie: u.cookie, body: { name: "x".repeat(256), slug: "ok" } });
    const e2 = expectError(long, 400, "invalid_request");
    expect(e2.details![0].path).toBe("body.name");
  });

  it("answers 401 before validating input for anonymous callers", async () => {
    const r = await call("/organizations", { body: { name: 1 } });
    expectError(r, 401, "unauthorized");
    const raw = await call("/organizations", { method: "POST", raw: "{{{", headers: { "Content-Type": "application/json" } });
    expectError(raw, 401, "unauthorized");
  });

  it("never answers 5xx to hostile input", async () => {
    const org = await createOrg();
    const junk: unknown[] = [null, [], "string", 12, { name: null }, { name: "\u0000".repeat(10), slug: "a" }, { slug: "--" }];
    const targets = [
      ["/organizations", "POST"],
      [`/organizations/${org.id}`, "PATCH"],
      [`/organizations/${org.id}/members`, "POST"],
      [`/organizations/${org.id}/members/role`, "POST"],
      ["/tenants", "POST"],
      [`/tenants/${org.tenantId}`, "PATCH"],
      [`/environments/${org.envId}/api-keys`, "POST"],
      [`/billing/organizations/${org.id}/credits`, "POST"],
      [`/billing/tenants/${org.tenantId}/credits`, "POST"],
    ] as const;
    for (const [path, method] of targets) {
      for (const body of junk) {
        const r = await call(path, { cookie: org.owner.cookie, method, body });
        expect(r.status, `${method} ${path} ${JSON.stringify(body)} -> ${JSON.stringify(r.body)}`).toBeLessThan(500);
        expect(r.body.error?.code ?? "ok").not.toBe("internal_error");
      }
    }
    const weird = await call(`/tenants?env_id=${"%".repeat(3)}&limit=abc`, { cookie: org.owner.cookie });
    expect(weird.status).toBeLessThan(500);
  });

  it("refuses request bodies over 16 MB with 413, declared or streamed", async () => {
    const org = await createOrg();
    const big = JSON.stringify({ name: "x".repeat(16 * 1024 * 1024 + 1) });
    expectError(await call("/tenants", { cookie: org.owner.cookie, raw: big, headers: { "Content-Type": "application/json" } }), 413, "payload_too_large");
    // Without a Content-Length (a chunked stream), the body is counted as it arrives.
    const chunk = new TextEncoder().encode("x".repeat(1024 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 17) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetchWorker("/api/v1/tenants", {
      method: "POST",
      headers: { Cookie: org.owner.cookie, "Content-Type": "application/json" },
      body: stream,
      // @ts-expect-error: a streamed request body (Workers accepts it without `duplex`)
      duplex: "half",
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.code).toBe("payload_too_large");
    // A normal body still goes through.
    expect((await call("/tenants", { cookie: org.owner.cookie, body: { name: "Fine", environment_id: org.envId } })).status).toBe(201);
  });

  it("serves the OpenAPI 3.1 document with every route and its schemas", async () => {
    const res = await fetchWorker("/openapi.json");
    expect(res.status).toBe(200);
    const doc: any = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    const expected: Array<[string, string]> = [
      ["/api/v1/auth/signup", "post"],
      ["/api/v1/auth/login", "post"],
      ["/api/v1/auth/logout", "post"],
      ["/api/v1/me", "get"],
      ["/api/v1/organizations", "get"],
      ["/api/v1/organizations", "post"],
      ["/api/v1/organizations/{id}", "get"],
      ["/api/v1/organizations/{id}", "patch"],
      ["/api/v1/organizations/{id}", "delete"],
      ["/api/v1/organizations/{id}/members", "get"],
      ["/api/v1/organizations/{id}/members", "post"],
      ["/api/v1/organizations/{id}/members/role", "post"],
      ["/api/v1/organizations/{id}/members/{member_id}", "delete"],
      ["/api/v1/organizations/{id}/invites/{invite_id}", "delete"],
      ["/api/v1/invitations", "get"],
      ["/api/v1/invitations/{id}/accept", "post"],
      ["/api/v1/organizations/{id}/environments", "get"],
      ["/api/v1/organizations/{id}/environments", "post"],
      ["/api/v1/environments/{id}", "get"],
      ["/api/v1/environments/{id}", "patch"],
      ["/api/v1/environments/{id}", "delete"],
      ["/api/v1/environments/{id}/api-keys", "get"],
      ["/api/v1/environments/{id}/api-keys", "post"],
      ["/api/v1/api-keys/{id}", "delete"],
      ["/api/v1/tenants", "get"],
      ["/api/v1/tenants", "post"],
      ["/api/v1/tenants/{id}", "get"],
      ["/api/v1/tenants/{id}", "patch"],
      ["/api/v1/tenants/{id}", "delete"],
      ["/api/v1/billing/tenants/{tenantId}/credits", "get"],
      ["/api/v1/billing/tenants/{tenantId}/credits", "post"],
      ["/api/v1/billing/organizations/{orgId}/credits", "post"],
      ["/api/v1/billing/organizations/{orgId}", "get"],
    ];
    for (const [path, method] of expected) {
      const op = doc.paths?.[path]?.[method];
      expect(op, `${method.toUpperCase()} ${path}`).toBeTruthy();
      expect(op.operationId).toBeTruthy();
      expect(Object.keys(op.responses)).toContain("400");
    }
    expect(doc.paths["/api/v1/tenants"].post.requestBody.content["application/json"].schema).toBeTruthy();
    expect(doc.components.schemas.Tenant).toBeTruthy();
    expect(doc.components.schemas.Error).toBeTruthy();
  });

  it("serves the explorer and its assets from the Worker (no CDN)", async () => {
    const page = await fetchWorker("/swagger");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("/swagger/swagger-ui-bundle.js");
    expect(html).not.toMatch(/cdn|unpkg|jsdelivr/i);
    const js = await fetchWorker("/swagger/swagger-ui-bundle.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("Content-Type")).toContain("javascript");
    expect((await js.text()).length).toBeGreaterThan(100_000);
    const traversal = await fetchWorker("/swagger/package.json");
    expect(traversal.status).toBe(404);
  });

  it("answers CORS preflights: any origin for keys, credentials only for allowed origins", async () => {
    const pre = await fetchWorker(`${API}/me`, {
      method: "OPTIONS",
      headers: { Origin: "https://app.example.net", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(pre.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    expect(pre.headers.get("Access-Control-Allow-Headers")).toContain("Authorization");

    const allowed = await fetchWorker(`${API}/me`, {
      method: "OPTIONS",
      headers: { Origin: "http://localhost:8787", "Access-Control-Request-Method": "POST" },
    });
    expect(allowed.headers.get("Access-Control-Allow-Origin")).toBe("http://localhost:8787");
    expect(allowed.headers.get("Access-Control-Allow-Credentials")).toBe("true");
  });

  it("refuses cookie-authenticated writes from foreign origins", async () => {
    const u = await signup();
    const r = await call("/organizations", {
      cookie: u.cookie,
      body: { name: "x", slug: "csrf-org" },
      headers: { Origin: "https://evil.example" },
    });
    expectError(r, 403, "forbidden");
  });
});
