import { and, eq, inArray, isNull, lt, or } from "drizzle-orm";
import type { Database } from "../../db/client";
import { connectorConnections, connectorOauthStates, tenants, type ConnectionReason, type ConnectorConnection } from "../../db/schema";
import type { Env } from "../../env";
import { config, isProduction } from "../../lib/config";
import { badRequest, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { decryptSecret, encryptSecret, openOptional, sealOptional } from "../../lib/secrets";
import { isoIn, nowIso } from "../../lib/time";
import { CATALOG, connectorBySlug } from "./catalog";
import { clientCredentials, endpointsOf } from "./config";
import { providerApi, providerFetch } from "./http";
import { authorizationUrl, newCodeVerifier, signState, STATE_TTL_SECONDS, tokenRequest, verifyState } from "./oauth";
import { ProviderError, type ConnectorDefinition, type ToolResult } from "./types";

/**
 * Connections: who connected which app, with sealed tokens. Every function takes the owner key computed by
 * the caller's identity (never by anything a model or a browser says): `user:<user id>` for a signed-in user,
 * `ext:<tenant id>:<external_subject_id>` for an API-served end user. Nobody else's connection is ever read.
 */

export interface Ctx {
  db: Database;
  env: Env;
}

export type Owner =
  | { kind: "user"; key: string; userId: string }
  | { kind: "ext"; key: string; tenantId: string; organizationId: string; externalSubjectId: string };

export const userOwner = (userId: string): Owner => ({ kind: "user", key: `user:${userId}`, userId });
export const extOwner = (tenant: { id: string; organizationId: string }, externalSubjectId: string): Owner => ({
  kind: "ext",
  key: `ext:${tenant.id}:${externalSubjectId}`,
  tenantId: tenant.id,
  organizationId: tenant.organizationId,
  externalSubjectId,
});
/** The owner key of a turn's subject (`user:<id>` / `ext:<external id>` within the chat's tenant); null for `key:`. */
export function ownerKeyOfSubject(subject: string, tenantId: string): string | null {
  if (subject.startsWith("user:")) return subject;
  if (subject.startsWith("ext:")) return `ext:${tenantId}:${subject.slice(4)}`;
  return null;
}

const aad = (id: string) => `connector_connection:${id}`;
const stateAad = (id: string) => `connector_oauth_state:${id}`;
/** An access token this close to expiry is refreshed first. */
const EXPIRY_SKEW_MS = 60_000;
const REFRESH_LOCK_MS = 30_000;

// ---- Catalog ----------------------------------------------------------------

export function catalogEntry(env: Env, def: ConnectorDefinition) {
  return {
    slug: def.slug,
    name: def.name,
    description: def.description,
    logo: def.logo,
    category: def.category,
    auth: "oauth2" as const,
    available: clientCredentials(env, def.slug) !== null,
    tools: def.tools.map((t) => ({ name: t.name, description: t.description })),
  };
}

export function listCatalog(env: Env, page: { offset: number; limit: number }) {
  return { connectors: CATALOG.slice(page.offset, page.offset + page.limit).map((d) => catalogEntry(env, d)), total: CATALOG.length };
}

export function catalogBySlugs(env: Env, slugs: string[]) {
  const seen = new Set<string>();
  const out = [];
  for (const s of slugs) {
    const def = connectorBySlug(s);
    if (def && !seen.has(s)) {
      seen.add(s);
      out.push(catalogEntry(env, def));
    }
  }
  return out;
}

// ---- Redirect URLs ----------------------------------------------------------

/** The final destination must be https (or http on localhost/127.0.0.1 outside production), without credentials. */
export function assertRedirectUrl(env: Env, raw: string, path = "body.redirect_url"): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest("redirect_url is not a valid URL", [{ path, message: "Must be an absolute URL" }]);
  }
  const local = u.protocol === "http:" && (u.hostname === "localhost" || u.hostname === "127.0.0.1") && !isProduction(env);
  if (u.protocol !== "https:" && !local) {
    throw badRequest("redirect_url must use https", [{ path, message: isProduction(env) ? "Must be https" : "Must be https, or http://localhost / http://127.0.0.1" }]);
  }
  if (u.username || u.password) throw badRequest("redirect_url must not carry credentials", [{ path, message: "No user:password@ in the URL" }]);
  return u;
}

export const callbackUrl = (env: Env) => `${config(env).publicBaseUrl}/api/v1/connectors/auth/callback`;

// ---- Connecting -------------------------------------------------------------

function definitionOrThrow(slug: string, path = "body.slug"): ConnectorDefinition {
  const def = connectorBySlug(slug);
  if (!def) throw badRequest(`Unknown connector: ${slug}`, [{ path, message: `Not in the catalog (${CATALOG.map((c) => c.slug).join(", ")})` }]);
  return def;
}

async function connectionOf(db: Database, ownerKey: string, slug: string) {
  return db.select().from(connectorConnections).where(and(eq(connectorConnections.ownerKey, ownerKey), eq(connectorConnections.slug, slug))).get();
}

export async function startConnect(ctx: Ctx, owner: Owner, slug: string, redirectUrl: string) {
  const def = definitionOrThrow(slug);
  const dest = assertRedirectUrl(ctx.env, redirectUrl);
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
  return { redirect_url: url, already_connected: existing?.status === "connected" };
}

/** Where the browser goes after the callback. */
function finalUrl(dest: string, slug: string, error?: string): string {
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
export async function completeConnect(ctx: Ctx, q: { code?: string; state?: string; error?: string }): Promise<CallbackOutcome> {
  if (!q.state) return { refused: "missing state" };
  const p = await verifyState(ctx.env, q.state);
  if ("refused" in p) return { refused: p.refused };
  const row = await ctx.db.delete(connectorOauthStates).where(eq(connectorOauthStates.id, p.n)).returning().get();
  if (!row) return { refused: "already used" };
  if (row.ownerKey !== p.o || row.slug !== p.s || row.redirectUrl !== p.r || Date.parse(row.expiresAt) <= Date.now()) return { refused: "mismatch" };

  const def = connectorBySlug(p.s);
  if (!def) return { refused: "unknown connector" };
  const fail = (code: string) => ({ location: finalUrl(p.r, p.s, code) });
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

async function saveConnection(
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
function parseOwnerKey(ownerKey: string): { userId: string | null; tenantId: string | null; organizationId: string | null; externalSubjectId: string | null } {
  if (ownerKey.startsWith("user:")) return { userId: ownerKey.slice(5), tenantId: null, organizationId: null, externalSubjectId: null };
  const rest = ownerKey.slice(4);
  const i = rest.indexOf(":");
  return { userId: null, tenantId: rest.slice(0, i), organizationId: null, externalSubjectId: rest.slice(i + 1) };
}

// ---- Status and disconnect ----------------------------------------------------

export async function connectionStatuses(ctx: Ctx, owner: Owner, slugs: string[]) {
  slugs.forEach((s, i) => definitionOrThrow(s, `body.slugs.${i}`));
  const unique = [...new Set(slugs)];
  const rows = await ctx.db
    .select()
    .from(connectorConnections)
    .where(and(eq(connectorConnections.ownerKey, owner.key), inArray(connectorConnections.slug, unique)));
  const statuses = [];
  for (const slug of unique) {
    let row = rows.find((r) => r.slug === slug);
    // An expired access token with nothing to refresh it is a lost connection: say so now.
    if (row && row.status === "connected" && !row.refreshToken && row.tokenExpiresAt && Date.parse(row.tokenExpiresAt) <= Date.now()) {
      row = await markDisconnected(ctx.db, row, "expired");
    }
    statuses.push({
      slug,
      connected: row?.status === "connected",
      status: row ? row.status : ("not_connected" as const),
      reason: row?.reason ?? null,
      account: row?.account ?? null,
      connected_at: row?.connectedAt ?? null,
    });
  }
  return statuses;
}

export async function disconnect(ctx: Ctx, owner: Owner, slug: string): Promise<void> {
  const def = connectorBySlug(slug);
  const row = def ? await connectionOf(ctx.db, owner.key, slug) : undefined;
  if (!def || !row) throw notFound("Connection");
  const deleted = await ctx.db.delete(connectorConnections).where(eq(connectorConnections.id, row.id)).returning({ id: connectorConnections.id }).get();
  if (!deleted) throw notFound("Connection");
  const client = clientCredentials(ctx.env, slug);
  if (!def.revoke || !client) return;
  // Revocation is best effort: the connection is gone here whatever the provider says.
  try {
    const accessToken = await decryptSecret(ctx.env, row.accessToken, aad(row.id));
    const refreshToken = await openOptional(ctx.env, row.refreshToken, aad(row.id));
    await def.revoke({ endpoints: endpointsOf(ctx.env, def), client, accessToken, refreshToken, fetch: providerFetch(ctx.env) });
  } catch (e) {
    console.warn("connector revocation failed", slug, e instanceof ProviderError ? e.status : (e as Error).name);
  }
}

// ---- Using a connection -------------------------------------------------------

/** The connection cannot be used until its owner connects again. */
export class ConnectionUnusable extends Error {
  constructor(
    readonly slug: string,
    readonly reason: ConnectionReason | "not_connected",
  ) {
    super(
      reason === "not_connected"
        ? `${slug} is not connected`
        : `The ${slug} connection is no longer usable (${reason === "scope_missing" ? "a permission it needs was not granted" : reason}); connect it again`,
    );
  }
}

async function markDisconnected(db: Database, row: ConnectorConnection, reason: ConnectionReason): Promise<ConnectorConnection> {
  const updated = await db
    .update(connectorConnections)
    .set({ status: "disconnected", reason, refreshLockUntil: null, updatedAt: nowIso() })
    .where(eq(connectorConnections.id, row.id))
    .returning()
    .get();
  return updated ?? { ...row, status: "disconnected", reason };
}

/** Which reason a refused refresh means. */
export function refreshFailureReason(e: ProviderError): ConnectionReason | null {
  const code = (e.code ?? "").toLowerCase();
  if (code.includes("scope")) return "scope_missing";
  if (code === "invalid_grant" || code === "invalid_refresh_token" || code === "token_revoked" || code === "unauthorized") {
    return /revok/i.test(e.message) || code === "token_revoked" ? "revoked" : "expired";
  }
  if (e.status === 400 || e.status === 401) return "expired";
  return null; // the provider is down or slow: try again later, keep the connection
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A usable access token for the connection, refreshed first when it expires within a minute (or when `force`,
 * after the provider refused it). One refresh at a time per connection: the first caller takes a lease on the
 * row; the others wait for its new token.
 */
async function accessTokenFor(ctx: Ctx, def: ConnectorDefinition, initial: ConnectorConnection, force = false): Promise<{ token: string; row: ConnectorConnection }> {
  let row = initial;
  const refused = initial.accessToken; // with `force`: the sealed token the provider refused
  for (let attempt = 0; attempt < 60; attempt++) {
    if (row.status !== "connected") throw new ConnectionUnusable(def.slug, row.reason ?? "revoked");
    const fresh = !row.tokenExpiresAt || Date.parse(row.tokenExpiresAt) - EXPIRY_SKEW_MS > Date.now();
    const needsRefresh = force ? row.accessToken === refused : !fresh;
    if (!needsRefresh) return { token: await decryptSecret(ctx.env, row.accessToken, aad(row.id)), row };
    if (!row.refreshToken) throw new ConnectionUnusable(def.slug, (await markDisconnected(ctx.db, row, force ? "revoked" : "expired")).reason ?? "expired");

    const lease = await ctx.db
      .update(connectorConnections)
      .set({ refreshLockUntil: isoIn(REFRESH_LOCK_MS) })
      .where(
        and(
          eq(connectorConnections.id, row.id),
          eq(connectorConnections.accessToken, row.accessToken),
          or(isNull(connectorConnections.refreshLockUntil), lt(connectorConnections.refreshLockUntil, nowIso())),
        ),
      )
      .run();
    if (lease.meta.changes) return refresh(ctx, def, row);
    // Someone else is refreshing (or just did): wait for the row to change.
    await sleep(200);
    const again = await ctx.db.select().from(connectorConnections).where(eq(connectorConnections.id, row.id)).get();
    if (!again) throw new ConnectionUnusable(def.slug, "not_connected");
    row = again;
  }
  throw new ProviderError(503, `The ${def.slug} token is being refreshed; try again`);
}

async function refresh(ctx: Ctx, def: ConnectorDefinition, row: ConnectorConnection): Promise<{ token: string; row: ConnectorConnection }> {
  const client = clientCredentials(ctx.env, def.slug);
  const release = () => ctx.db.update(connectorConnections).set({ refreshLockUntil: null }).where(eq(connectorConnections.id, row.id));
  if (!client) {
    await release();
    throw new ProviderError(503, `${def.name} is not configured (CONNECTORS)`);
  }
  let token;
  try {
    const refreshToken = await decryptSecret(ctx.env, row.refreshToken!, aad(row.id));
    token = await tokenRequest(ctx.env, def, endpointsOf(ctx.env, def), client, { grant_type: "refresh_token", refresh_token: refreshToken });
  } catch (e) {
    const reason = e instanceof ProviderError ? refreshFailureReason(e) : null;
    if (reason) throw new ConnectionUnusable(def.slug, (await markDisconnected(ctx.db, row, reason)).reason ?? reason);
    await release();
    throw e;
  }
  const updated = await ctx.db
    .update(connectorConnections)
    .set({
      accessToken: await encryptSecret(ctx.env, token.accessToken, aad(row.id)),
      // Providers that rotate refresh tokens send a new one; the others keep the old one valid.
      refreshToken: token.refreshToken ? await encryptSecret(ctx.env, token.refreshToken, aad(row.id)) : row.refreshToken,
      tokenExpiresAt: token.expiresIn !== null ? isoIn(token.expiresIn * 1000) : null,
      scopes: token.scope ?? row.scopes,
      refreshLockUntil: null,
      updatedAt: nowIso(),
    })
    .where(eq(connectorConnections.id, row.id))
    .returning()
    .get();
  return { token: token.accessToken, row: updated ?? row };
}

/** Runs one of a connector's tools for an owner, with their connection; refreshes once if the token is refused. */
export async function runConnectorTool(ctx: Ctx, ownerKey: string, slug: string, toolName: string, input: Record<string, unknown>, signal: AbortSignal): Promise<ToolResult> {
  const def = connectorBySlug(slug);
  const tool = def?.tools.find((t) => t.name === toolName);
  if (!def || !tool) throw new ConnectionUnusable(slug, "not_connected");
  const row = await connectionOf(ctx.db, ownerKey, slug);
  if (!row) throw new ConnectionUnusable(slug, "not_connected");
  const endpoints = endpointsOf(ctx.env, def);
  const extra = JSON.parse(row.extra || "{}") as Record<string, unknown>;
  let current = await accessTokenFor(ctx, def, row);
  try {
    return await tool.execute(input, providerApi(ctx.env, endpoints, current.token, extra, signal));
  } catch (e) {
    if (!(e instanceof ProviderError)) throw e;
    if (e.code === "scope_missing" || e.code === "missing_scope") {
      await markDisconnected(ctx.db, current.row, "scope_missing");
      throw new ConnectionUnusable(slug, "scope_missing");
    }
    if (e.status !== 401) throw e;
    // The provider refused a token we thought valid: refresh once (or learn that the grant is gone).
    current = await accessTokenFor(ctx, def, current.row, true);
    return tool.execute(input, providerApi(ctx.env, endpoints, current.token, extra, signal));
  }
}

/** Slugs of `slugs` that are unknown or not connected for the owner (null owner: none is connected). */
export async function unconnectedSlugs(db: Database, ownerKey: string | null, slugs: string[]): Promise<string[]> {
  const unique = [...new Set(slugs)];
  if (!ownerKey || !unique.length) return unique;
  const rows = await db
    .select({ slug: connectorConnections.slug, status: connectorConnections.status })
    .from(connectorConnections)
    .where(and(eq(connectorConnections.ownerKey, ownerKey), inArray(connectorConnections.slug, unique)));
  return unique.filter((s) => !connectorBySlug(s) || rows.find((r) => r.slug === s)?.status !== "connected");
}
