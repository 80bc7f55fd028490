import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { createDb } from "../../src/db/client";
import { connectorToolProvider } from "../../src/services/connectors/provider";
import type { Tool, TurnScope } from "../../src/contracts/tools";
import { call, expectStatus, fetchWorker, testServer, type Auth } from "../helpers";

export const SLUGS = ["github", "google-drive", "notion", "slack", "linear", "jira"] as const;
/** An allowed final destination outside production (the service's origin, localhost, or a listed origin). */
export const DONE = "http://localhost:5173/connected";

/** The test's browser: cookies set by our flow URLs, sent back to our callback. */
export const browser = new Map<string, string>();
export const cookieHeader = (jar: Map<string, string> = browser) => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");

/**
 * Opens a flow URL (on our origin) as a browser: keeps its cookie in `jar` and returns where it
 * redirects (the provider's authorization URL).
 */
export async function openFlow(flowUrl: string, jar: Map<string, string> = browser, sessionCookie?: string): Promise<string> {
  expect(flowUrl.startsWith("http://localhost:8787/api/v1/oauth-flows/"), flowUrl).toBe(true);
  const res = await fetchWorker(flowUrl, { redirect: "manual", headers: sessionCookie ? { Cookie: sessionCookie } : {} });
  const text = res.status === 302 ? "" : await res.text();
  expect(res.status, text).toBe(302);
  const set = res.headers.get("Set-Cookie") ?? "";
  expect(set).toMatch(/HttpOnly/i);
  expect(set).toMatch(/Secure/i);
  expect(set).toMatch(/SameSite=Lax/i);
  const m = /^([^=]+)=([^;]*)/.exec(set)!;
  jar.set(m[1], m[2]);
  return res.headers.get("Location")!;
}

export interface Owner {
  tenant_id?: string;
  external_subject_id?: string;
}

/** POST /connectors/add, then the flow URL opened in `jar`'s browser; returns the provider's authorization URL. */
export async function startAdd(auth: Auth, slug: string, owner: Owner = {}, redirect_url = DONE, jar: Map<string, string> = browser) {
  const r = await call("/connectors/add", { ...auth, body: { slug, redirect_url, ...owner } });
  const added = expectStatus(r, 200) as { redirect_url: string; already_connected: boolean };
  return { ...added, flow_url: added.redirect_url, redirect_url: await openFlow(added.redirect_url, jar, auth.cookie) };
}

/** Follows the authorization URL at the local provider (auto-approving); returns our callback URL it redirects to. */
export async function approve(authorizationUrl: string, knobs: Record<string, string> = {}): Promise<string> {
  const u = new URL(authorizationUrl);
  for (const [k, v] of Object.entries(knobs)) u.searchParams.set(k, v);
  const res = await fetch(u, { redirect: "manual" });
  const text = res.status === 302 ? "" : await res.text();
  expect(res.status, text).toBe(302);
  return res.headers.get("Location")!;
}

/** Our callback, as the browser (`jar`) would call it; returns the final destination it redirects to. */
export async function callback(url: string, jar: Map<string, string> = browser): Promise<{ status: number; location: URL | null; body: any }> {
  const res = await fetchWorker(url, { redirect: "manual", headers: { Cookie: cookieHeader(jar) } });
  const location = res.headers.get("Location");
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, location: location ? new URL(location) : null, body };
}

/** add → provider → callback; asserts the final redirect says connected. */
export async function connect(auth: Auth, slug: string, owner: Owner = {}, knobs: Record<string, string> = {}) {
  const add = await startAdd(auth, slug, owner);
  const cb = await callback(await approve(add.redirect_url, knobs));
  expect(cb.status, JSON.stringify(cb.body)).toBe(302);
  expect(cb.location!.searchParams.get("status"), cb.location!.toString()).toBe("connected");
  expect(cb.location!.searchParams.get("slug")).toBe(slug);
  return cb.location!;
}

export async function statuses(auth: Auth, slugs: readonly string[], owner: Owner = {}) {
  const r = await call("/connectors/status", { ...auth, body: { slugs, ...owner } });
  return expectStatus(r, 200).statuses as Array<{ slug: string; connected: boolean; status: string; reason: string | null; account: string | null; connected_at: string | null }>;
}

export async function providerLog(): Promise<{ refreshes: string[]; revocations: string[]; tokenRequests: Array<Record<string, string>> }> {
  return (await fetch(`${testServer("connectors")}/_control/log`)).json();
}

/** The connector tools a deep-mode turn of `subject` in `tenantId` gets for `slugs`. */
export async function turnTools(subject: string, tenantId: string, slugs: string[], mode: "deep" | "quick" = "deep"): Promise<{ tools: Tool[]; scope: TurnScope }> {
  const scope = { db: createDb(env.DB), env, chat: { tenantId } as any, kb: {} as any, actor: {} as any, subject, mode, streaming: false, runId: null, depth: 0 } as TurnScope;
  const settings = { websearch: false, mcpServerIds: [], connectorSlugs: slugs, delegateIds: [], autoSkills: [] };
  return { tools: await connectorToolProvider.tools(scope, settings), scope };
}

export async function runTool(tools: Tool[], scope: TurnScope, name: string, input: Record<string, unknown>) {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} in ${tools.map((t) => t.name).join(", ")}`);
  return tool.execute(input, { signal: AbortSignal.timeout(20_000), scope, emit: () => {}, callId: "c1" });
}
