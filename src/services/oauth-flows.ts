import { and, eq, isNull, lt } from "drizzle-orm";
import type { Database } from "../db/client";
import { oauthBrowserFlows } from "../db/schema";
import type { Env } from "../env";
import { config } from "../lib/config";
import { randomToken, sha256Hex } from "../lib/crypto";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

/**
 * OAuth flows bound to the browser that started them (API-DECISIONS "Wave 3"): connector and MCP
 * authorizations hand out a URL on the service's own origin, not the provider's. Opening it once
 * sets a short-lived `HttpOnly; Secure; SameSite=Lax` cookie for that flow and redirects to the
 * provider; the callback completes only in a browser that carries that cookie. A link forwarded to
 * someone else (or a callback replayed in another browser) connects nothing.
 */

export const FLOW_TTL_MS = 10 * 60_000;
const COOKIE_PATH = "/api/v1";
export const flowCookieName = (id: string) => `kb_flow_${id}`;

export type FlowKind = "connector" | "mcp";

export interface NewFlow {
  kind: FlowKind;
  /** The OAuth `state` the provider will send back to the callback. */
  state: string;
  /** The provider's authorization URL. */
  authorizeUrl: string;
  /** The signed-in user who started the flow, if a user did: only a browser signed in as them may open it. */
  userId: string | null;
}

/** Records a flow; returns the URL (on our origin) the user's browser must open. */
export async function createBrowserFlow(env: Env, db: Database, flow: NewFlow): Promise<string> {
  const id = newId("flw");
  const now = Date.now();
  await db.delete(oauthBrowserFlows).where(lt(oauthBrowserFlows.expiresAt, new Date(now).toISOString()));
  await db.insert(oauthBrowserFlows).values({
    id,
    kind: flow.kind,
    stateHash: await sha256Hex(flow.state),
    authorizeUrl: flow.authorizeUrl,
    browserHash: null,
    userId: flow.userId,
    expiresAt: new Date(now + FLOW_TTL_MS).toISOString(),
    createdAt: nowIso(),
  });
  return `${config(env).publicBaseUrl}/api/v1/oauth-flows/${id}`;
}

export type OpenedFlow = { location: string; cookie: { name: string; value: string; maxAge: number; path: string } } | { refused: string };

/**
 * The first browser to open a flow's URL owns it: it gets the cookie and goes on to the provider. A
 * flow a signed-in user started opens only in a browser signed in as that user (`openerUserId`), so
 * a link sent to someone else cannot connect their account under the sender.
 */
export async function openBrowserFlow(db: Database, id: string, openerUserId: string | null): Promise<OpenedFlow> {
  const pending = await db.select({ userId: oauthBrowserFlows.userId }).from(oauthBrowserFlows).where(eq(oauthBrowserFlows.id, id)).get();
  if (pending?.userId && pending.userId !== openerUserId) {
    return { refused: "Open this link in the browser where you are signed in as the person who started connecting." };
  }
  const nonce = randomToken(24);
  const row = await db
    .update(oauthBrowserFlows)
    .set({ browserHash: await sha256Hex(nonce) })
    .where(and(eq(oauthBrowserFlows.id, id), isNull(oauthBrowserFlows.browserHash)))
    .returning()
    .get();
  if (!row) return { refused: "This authorization link is unknown or was already opened in a browser; start connecting again." };
  const left = Date.parse(row.expiresAt) - Date.now();
  if (left <= 0) return { refused: "This authorization link has expired; start connecting again." };
  return { location: row.authorizeUrl, cookie: { name: flowCookieName(row.id), value: nonce, maxAge: Math.ceil(left / 1000), path: COOKIE_PATH } };
}

export type ClaimedFlow = { ok: true; cookieName: string } | { ok: false; reason: "flow_not_started_here"; cookieName: string | null };

/**
 * At the callback: does this browser carry the cookie of the flow that `state` belongs to? The flow
 * is consumed either way (single use). A state that never had a flow is not ours to judge here.
 */
export async function claimBrowserFlow(db: Database, state: string, cookieOf: (name: string) => string | undefined): Promise<ClaimedFlow> {
  const row = await db.delete(oauthBrowserFlows).where(eq(oauthBrowserFlows.stateHash, await sha256Hex(state))).returning().get();
  if (!row) return { ok: false, reason: "flow_not_started_here", cookieName: null };
  const name = flowCookieName(row.id);
  const value = cookieOf(name);
  if (!row.browserHash || !value || (await sha256Hex(value)) !== row.browserHash || Date.parse(row.expiresAt) <= Date.now()) {
    return { ok: false, reason: "flow_not_started_here", cookieName: name };
  }
  return { ok: true, cookieName: name };
}
