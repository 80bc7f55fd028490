import { and, eq, inArray, isNull, lt, or } from "drizzle-orm";
import type { Database } from "../../db/client";
import { connectorConnections, type ConnectionReason, type ConnectorConnection } from "../../db/schema";
import { decryptSecret, encryptSecret } from "../../lib/secrets";
import { isoIn, nowIso } from "../../lib/time";
import { connectorBySlug } from "./catalog";
import { clientCredentials, endpointsOf } from "./config";
import { providerApi } from "./http";
import { tokenRequest } from "./oauth";
import { ProviderError, type ConnectorDefinition, type ToolResult } from "./types";
import { aad, type Ctx, EXPIRY_SKEW_MS, REFRESH_LOCK_MS } from "./connections";
import { connectionOf } from "./connect";

/** Using a connection in a turn: a fresh access token (one refresh at a time), the provider call, unusable connections. */

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

export async function markDisconnected(db: Database, row: ConnectorConnection, reason: ConnectionReason): Promise<ConnectorConnection> {
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

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A usable access token for the connection, refreshed first when it expires within a minute (or when `force`,
 * after the provider refused it). One refresh at a time per connection: the first caller takes a lease on the
 * row; the others wait for its new token.
 */
export async function accessTokenFor(ctx: Ctx, def: ConnectorDefinition, initial: ConnectorConnection, force = false): Promise<{ token: string; row: ConnectorConnection }> {
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

export async function refresh(ctx: Ctx, def: ConnectorDefinition, row: ConnectorConnection): Promise<{ token: string; row: ConnectorConnection }> {
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
