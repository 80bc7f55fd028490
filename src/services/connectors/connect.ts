import { and, eq, lt } from "drizzle-orm";
import type { Database } from "../../db/client";
import { connectorConnections, connectorOauthStates, tenants } from "../../db/schema";
import type { Env } from "../../env";
import { config, isProduction } from "../../lib/config";
import { badRequest } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { encryptSecret, openOptional, sealOptional } from "../../lib/secrets";
import { isoIn, nowIso } from "../../lib/time";
import { CATALOG, connectorBySlug } from "./catalog";
import { clientCredentials, endpointsOf } from "./config";
import { providerApi } from "./http";
import { authorizationUrl, newCodeVerifier, signState, STATE_TTL_SECONDS, tokenRequest, verifyState } from "./oauth";
import { ProviderError, type ConnectorDefinition } from "./types";
import { aad, type Ctx, type Owner, stateAad } from "./connections";
import { claimBrowserFlow, createBrowserFlow } from "../oauth-flows";

/** Connecting an app: the redirect URL check, the authorization start, and the browser callback that stores the connection. */

/**
 * The final destination: an allow-listed origin (API-DECISIONS "Wave 3"): the service's own origin,
 * http://localhost / 127.0.0.1 outside production, or one of `allowedOrigins` (the environments'
 * `allowed_redirect_origins` the caller reaches); https, without credentials.
 */
export function assertRedirectUrl(env: Env, raw: string, allowedOrigins: readonly string[] = [], path = "body.redirect_url"): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest("redirect_url is not a valid URL", [{ path, message: "Must be an absolute URL" }]);
  }
  const localHost = (u.hostname === "localhost" || u.hostname === "127.0.0.1") && !isProduction(env);
  const local = localHost && (u.protocol === "http:" || u.protocol === "https:");
  if (u.protocol !== "https:" && !local) {
    throw badRequest("redirect_url must use https", [{ path, message: isProduction(env) ? "Must be https" : "Must be https, or http://localhost / http://127.0.0.1" }]);
  }
  if (u.username || u.password) throw badRequest("redirect_url must not carry credentials", [{ path, message: "No user:password@ in the URL" }]);
  if (!local && u.origin !== new URL(config(env).publicBaseUrl).origin && !allowedOrigins.includes(u.origin)) {
    throw badRequest(`redirect_url: ${u.origin} is not an allowed redirect origin`, [
      { path, message: "Add the origin to the environment's allowed_redirect_origins (PATCH /environments/{id})" },
    ]);
  }
  return u;
}

export const callbackUrl = (env: Env) => `${config(env).publicBaseUrl}/api/v1/connectors/auth/callback`;


export function definitionOrThrow(slug: string, path = "body.slug"): ConnectorDefinition {
  const def = connectorBySlug(slug);
  if (!def) throw badRequest(`Unknown connector: ${slug}`, [{ path, message: `Not in the catalog (${CATALOG.map((c) => c.slug).join(", ")})` }]);
  return def;
}

export async function connectionOf(db: Database, ownerKey: string, slug: string) {
  return db.select().from(connectorConnections).where(and(eq(connectorConnections.ownerKey, ownerKey), eq(connectorConnections.slug, slug))).get();
}

export async function startConnect(ctx: Ctx, owner: Owner, slug: string, redirectUrl: string, allowedOrigins: readonly string[] = []) {
  const def = definitionOrThrow(slug);
  const dest = assertRedirectUrl(ctx.env, redirectUrl, allowedOrigins);
  const client = clientCredentials(ctx.env, slug);
  if (!client) throw badRequest(`${def.name} is not available: its OAuth app is not configured`, [{ path: "body.slug", message: "Connector not configured (CONNECTORS)" }]);
  const existing = await connectionOf(ctx.db, owner.key, slug);

  const id = newId("cst");
  const verifier = def.pkce ? newCodeVerifier() : null;
  const expiresAtSeconds = Math.floor(Date.now() / 1000) + STATE_TTL_SECONDS;
  const now = nowIso();
  // Old pending authorizations are dropped as new ones start (each lives 10 minutes).
  await ctx.db.delete(connectorOauthStates).where(lt(connectorOauthStates.expiresAt, now));
  await ctx.db.insert(connectorOauthStates).values({
    id,
    ownerKey: owner.key,
    slug,
    codeVerifier: await sealOptional(ctx.env, verifier, stateAad(id)),
    redirectUrl: dest.toString(),
    expiresAt: new Date(expiresAtSeconds * 1000).toISOString(),
    createdAt: now,
  });
  const state = await signState(ctx.env, { n: id, o: owner.key, s: slug, r: dest.toString(), e: expiresAtSeconds });
  const url = await authorizationUrl(def, endpointsOf(ctx.env, def), client, { redirectUri: callbackUrl(ctx.env), state, verifier });
  // The browser opens a URL on our own origin first, which binds the flow to it (src/services/oauth-flows.ts).
  const flowUrl = await createBrowserFlow(ctx.env, ctx.db, { kind: "connector", state, authorizeUrl: url, userId: owner.kind === "user" ? owner.userId : null });
  return { redirect_url: flowUrl, already_connected: existing?.status === "connected" };
}

/** Where the browser goes after the callback. */
export function finalUrl(dest: string, slug: string, error?: string): string {
  const u = new URL(dest);
  u.searchParams.set("status", error ? "error" : "connected");
  u.searchParams.set("slug", slug);
  if (error) u.searchParams.set("error", error);
  return u.toString();
}

export type CallbackOutcome = { refused: string } | { location: string };

/**
 * The provider sent the browser back. The state must be ours (HMAC), unexpired and unused (its row is
 * deleted as it is read, so a replay finds nothing); only then is the destination trusted.
 */
export async function completeConnect(
  ctx: Ctx,
  q: { code?: string; state?: string; error?: string },
  cookieOf: (name: string) => string | undefined = () => undefined,
): Promise<CallbackOutcome> {
  if (!q.state) return { refused: "missing state" };
  const p = await verifyState(ctx.env, q.state);
  if ("refused" in p) return { refused: p.refused };
  const row = await ctx.db.delete(connectorOauthStates).where(eq(connectorOauthStates.id, p.n)).returning().get();
  if (!row) return { refused: "already used" };
  if (row.ownerKey !== p.o || row.slug !== p.s || row.redirectUrl !== p.r || Date.parse(row.expiresAt) <= Date.now()) return { refused: "mismatch" };

  const def = connectorBySlug(p.s);
  if (!def) return { refused: "unknown connector" };
  const fail = (code: string) => ({ location: finalUrl(p.r, p.s, code) });
  // Only in the browser that opened the flow: another browser's callback connects nothing.
  const flow = await claimBrowserFlow(ctx.db, q.state, cookieOf);
  if (!flow.ok) return fail(flow.reason);
  if (q.error) return fail(/^[a-z_]{1,64}$/.test(q.error) ? q.error : "access_denied");
  if (!q.code) return fail("missing_code");
  const client = clientCredentials(ctx.env, p.s);
  if (!client) return fail("not_configured");
  const endpoints = endpointsOf(ctx.env, def);

  try {
    const verifier = await openOptional(ctx.env, row.codeVerifier, stateAad(row.id));
    const grant: Record<string, string> = { grant_type: "authorization_code", code: q.code, redirect_uri: callbackUrl(ctx.env) };
    if (verifier) grant.code_verifier = verifier;
    const token = await tokenRequest(ctx.env, def, endpoints, client, grant);
    const identity = await def.identify(providerApi(ctx.env, endpoints, token.accessToken, {}, AbortSignal.timeout(20_000)), token);
    await saveConnection(ctx, p.o, def, token, identity);
    return { location: finalUrl(p.r, p.s) };
  } catch (e) {
    if (e instanceof ProviderError) return fail(e.code === "scope_missing" ? "scope_missing" : e.code && /^[a-z_]{1,64}$/.test(e.code) ? e.code : "token_exchange_failed");
    console.error("connector callback failed", p.s, (e as Error).name);
    return fail("server_error");
  }
}

export async function saveConnection(
  ctx: Ctx,
  ownerKey: string,
  def: ConnectorDefinition,
  token: { accessToken: string; refreshToken: string | null; expiresIn: number | null; scope: string | null },
  identity: { account: string | null; accountId: string | null; extra?: Record<string, unknown> },
) {
  const owner = parseOwnerKey(ownerKey);
  if (owner.tenantId) {
    const tenant = await ctx.db.select({ organizationId: tenants.organizationId }).from(tenants).where(eq(tenants.id, owner.tenantId)).get();
    if (!tenant) throw new ProviderError(400, "The tenant no longer exists", "tenant_deleted");
    owner.organizationId = tenant.organizationId;
  }
  const id = newId("ccn");
  const now = nowIso();
  const values = {
    id,
    ownerKey,
    userId: owner.userId,
    organizationId: owner.organizationId,
    tenantId: owner.tenantId,
    externalSubjectId: owner.externalSubjectId,
    slug: def.slug,
    status: "connected" as const,
    reason: null,
    account: identity.account?.slice(0, 320) ?? null,
    accountId: identity.accountId?.slice(0, 255) ?? null,
    accessToken: await encryptSecret(ctx.env, token.accessToken, aad(id)),
    refreshToken: await sealOptional(ctx.env, token.refreshToken, aad(id)),
    tokenExpiresAt: token.expiresIn !== null ? isoIn(token.expiresIn * 1000) : null,
    scopes: token.scope,
    extra: JSON.stringify(identity.extra ?? {}),
    refreshLockUntil: null,
    connectedAt: now,
    updatedAt: now,
  };
  // Reconnecting replaces the row whole (new id, so the sealed tokens match their AAD).
  const { ownerKey: _o, slug: _s, ...update } = values;
  await ctx.db.insert(connectorConnections).values(values).onConflictDoUpdate({ target: [connectorConnections.ownerKey, connectorConnections.slug], set: update });
}

/** Owner columns from a key we built (the tenant's organization is looked up by the caller that built it). */
export function parseOwnerKey(ownerKey: string): { userId: string | null; tenantId: string | null; organizationId: string | null; externalSubjectId: string | null } {
  if (ownerKey.startsWith("user:")) return { userId: ownerKey.slice(5), tenantId: null, organizationId: null, externalSubjectId: null };
  const rest = ownerKey.slice(4);
  const i = rest.indexOf(":");
  return { userId: null, tenantId: rest.slice(0, i), organizationId: null, externalSubjectId: rest.slice(i + 1) };
}
