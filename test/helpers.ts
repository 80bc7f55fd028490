import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { EnvironmentResponse } from "../src/routes/environments";
import type { KnowledgeBaseResponse } from "../src/routes/knowledge-bases/schemas";
import type { TenantResponse } from "../src/routes/tenants";

/**
 * One-line helpers for tests: an HTTP client for the Worker, and builders for
 * a user, an organization with a member of a given role, and an API key with
 * given scopes. Storage is isolated per test file, so each test makes its own.
 */

export const BASE = "http://localhost:8787";
export const API = `${BASE}/api/v1`;

export interface Auth {
  cookie?: string;
  key?: string;
}

export interface CallOptions extends Auth {
  method?: string;
  body?: unknown;
  /** Raw body, sent as is (for malformed-JSON tests). */
  raw?: BodyInit;
  headers?: Record<string, string>;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  res: Response;
}

export async function fetchWorker(input: string | Request, init?: RequestInit): Promise<Response> {
  const req = typeof input === "string" ? new Request(input.startsWith("http") ? input : BASE + input, init) : input;
  return (exports as any).default.fetch(req);
}

export async function call<T = any>(path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.cookie) headers.Cookie = opts.cookie;
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  let body: BodyInit | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  const res = await fetchWorker(`${path.startsWith("http") ? "" : API}${path}`, {
    method: opts.method ?? (body !== undefined ? "POST" : "GET"),
    headers,
    body,
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed as T, res };
}

/** Asserts the decided error shape and returns the error object. */
export function expectError(r: ApiResponse, status: number, code?: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body?.error, JSON.stringify(r.body)).toBeTruthy();
  expect(typeof r.body.error.message).toBe("string");
  expect(r.body.error.request_id).toBe(r.headers.get("X-Request-Id"));
  if (code) expect(r.body.error.code).toBe(code);
  return r.body.error as { code: string; message: string; details?: { path: string; message: string }[] };
}

export function expectStatus(r: ApiResponse, status: number) {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

let seq = 0;
export const unique = (prefix = "t") => `${prefix}${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

export interface TestUser {
  id: string;
  email: string;
  cookie: string;
}

export async function signup(email = `${unique("u")}@example.com`, password = "correct-horse-battery"): Promise<TestUser> {
  const r = await call("/auth/signup", { body: { email, password, name: "Test User" } });
  expectStatus(r, 201);
  const setCookie = r.headers.get("Set-Cookie") ?? "";
  const m = /kb_session=([^;]+)/.exec(setCookie);
  if (!m) throw new Error(`no session cookie in ${setCookie}`);
  return { id: r.body.user.id, email, cookie: `kb_session=${m[1]}` };
}

export interface TestOrg {
  id: string;
  slug: string;
  envId: string;
  tenantId: string;
  owner: TestUser;
}

export async function createOrg(owner?: TestUser, slug = unique("org-")): Promise<TestOrg> {
  const user = owner ?? (await signup());
  const r = await call("/organizations", { cookie: user.cookie, body: { name: `Org ${slug}`, slug } });
  expectStatus(r, 201);
  return { id: r.body.id, slug, envId: r.body.default_environment_id, tenantId: r.body.default_tenant_id, owner: user };
}

export type Role = "owner" | "billing_admin" | "developer" | "viewer";

/** A new user who is a member of `org` with `role`, through invite and accept. */
export async function addMember(org: TestOrg, role: Role): Promise<TestUser> {
  const user = await signup();
  const inviteRole = role === "owner" ? "viewer" : role;
  const inv = await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie, body: { email: user.email, role: inviteRole } });
  expectStatus(inv, 201);
  expectStatus(await call(`/invitations/${inv.body.id}/accept`, { cookie: user.cookie, method: "POST" }), 200);
  if (role === "owner") {
    expectStatus(await call(`/organizations/${org.id}/members/role`, { cookie: org.owner.cookie, body: { user_id: user.id, role: "owner" } }), 200);
  }
  return user;
}

export interface KeyOptions {
  scopes: string[];
  envId?: string;
  tenant_ids?: string[];
  knowledge_base_id?: string;
  expires_at?: string;
}

/** An API key of `org` (default environment unless `envId`) with the given scopes. */
export async function createKey(org: TestOrg, opts: KeyOptions): Promise<{ key: string; id: string }> {
  const r = await call(`/environments/${opts.envId ?? org.envId}/api-keys`, {
    cookie: org.owner.cookie,
    body: {
      name: unique("key"),
      scopes: opts.scopes,
      tenant_ids: opts.tenant_ids,
      knowledge_base_id: opts.knowledge_base_id,
      expires_at: opts.expires_at,
    },
  });
  expectStatus(r, 201);
  return { key: r.body.key, id: r.body.id };
}

export async function createTenant(org: TestOrg, body: Record<string, unknown> = {}, envId = org.envId) {
  const r = await call("/tenants", { cookie: org.owner.cookie, body: { environment_id: envId, name: unique("tenant"), ...body } });
  expectStatus(r, 201);
  return r.body as TenantResponse;
}

export async function createEnvironment(org: TestOrg, name = unique("env")) {
  const r = await call(`/organizations/${org.id}/environments`, { cookie: org.owner.cookie, body: { name } });
  expectStatus(r, 201);
  return r.body as EnvironmentResponse;
}

export async function createKb(org: TestOrg, body: Record<string, unknown> = {}, auth: Auth = { cookie: org.owner.cookie }) {
  const r = await call("/knowledge-bases", { ...auth, body: { tenant_id: org.tenantId, name: unique("kb"), ...body } });
  expectStatus(r, 201);
  return r.body as KnowledgeBaseResponse;
}

/** Base URL of a local test server started by test/servers (by name). */
export function testServer(name: string): string {
  const url = JSON.parse(env.TEST_SERVERS || "{}")[name];
  if (!url) throw new Error(`test server '${name}' is not registered in test/servers/index.ts`);
  return url;
}
