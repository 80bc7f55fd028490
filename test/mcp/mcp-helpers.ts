import { expect, vi } from "vitest";
import { call, expectStatus, testServer, type ApiResponse, type Auth, type TestOrg } from "../helpers";

/** Every response body a test saw, so that it can assert no secret ever appeared in one. */
export const seen: string[] = [];

export async function track<T = any>(p: Promise<ApiResponse<T>>): Promise<ApiResponse<T>> {
  const r = await p;
  seen.push(typeof r.body === "string" ? r.body : JSON.stringify(r.body));
  seen.push([...r.headers].map(([k, v]) => `${k}: ${v}`).join("\n"));
  return r;
}

export const mcpUrl = (path: string) => `${testServer("mcp")}${path}`;

export async function register(org: TestOrg, body: Record<string, unknown>, auth: Auth = { cookie: org.owner.cookie }) {
  return track(call(`/mcp/servers?org_id=${org.id}`, { ...auth, body }));
}

/** Polls the registration until discovery is done (status other than pending). */
export async function settled(org: TestOrg, id: string, auth: Auth = { cookie: org.owner.cookie }) {
  for (let i = 0; i < 100; i++) {
    const r = await track(call(`/mcp/servers?org_id=${org.id}`, auth));
    const s = expectStatus(r, 200).servers.find((x: { id: string }) => x.id === id);
    if (s && s.status !== "pending") return s;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`registration ${id} stayed pending`);
}

export async function registerReady(org: TestOrg, body: Record<string, unknown>) {
  const created = expectStatus(await register(org, body), 201);
  const s = await settled(org, created.id);
  expect(s.status, JSON.stringify(s)).toBe("ready");
  return s as { id: string; name: string; tool_count: number; status: string; auth: string };
}

/** Every console line written while the file runs (the Worker runs in the test's isolate), to assert no secret is logged. */
export function captureLogs(): string[] {
  const lines: string[] = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    const original = console[level].bind(console);
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
      original(...args);
    });
  }
  return lines;
}
