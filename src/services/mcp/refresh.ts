import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Database } from "../../db/client";
import { mcpServers, type McpServer } from "../../db/schema";
import type { Env } from "../../env";
import { mcpFetch } from "./guard";
import { getMcpServer, setMcpStatus } from "./servers";
import { accessTokenOf, LEASE_MS, McpAuthRequired, REFRESH_MARGIN_MS, safeMessage, StoredOAuthProvider } from "./oauth";

/** Access tokens of OAuth-connected MCP servers, refreshed before they expire — by one caller at a time. */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The access token to send, refreshed first when it expires within a minute
 * (or `force`, after the server answered 401). Only the holder of the lease
 * refreshes; others wait for its new token. Throws McpAuthRequired when there
 * is no usable token any more.
 */
export async function freshAccessToken(env: Env, db: Database, row: McpServer, opts: { force?: boolean; signal?: AbortSignal } = {}): Promise<string> {
  const tokens = await accessTokenOf(env, row);
  if (!tokens) throw new McpAuthRequired();
  const expiring = row.oauthTokenExpiresAt !== null && row.oauthTokenExpiresAt - Date.now() < REFRESH_MARGIN_MS;
  if (!opts.force && !expiring) return tokens.access_token;
  if (!tokens.refresh_token) {
    if (opts.force || (row.oauthTokenExpiresAt ?? 0) < Date.now()) throw new McpAuthRequired();
    return tokens.access_token;
  }
  if (await takeRefreshLease(db, row)) return refreshHoldingLease(env, db, row);
  return awaitOthersRefresh(env, db, row, opts);
}

/** The refresh lease of this token version, when nobody holds it (one refresh at a time: a reused refresh token revokes the grant). */
async function takeRefreshLease(db: Database, row: McpServer): Promise<boolean> {
  const now = Date.now();
  const won = await db
    .update(mcpServers)
    .set({ refreshLeaseUntil: now + LEASE_MS })
    .where(
      and(
        eq(mcpServers.id, row.id),
        eq(mcpServers.oauthTokenVersion, row.oauthTokenVersion),
        or(isNull(mcpServers.refreshLeaseUntil), lt(mcpServers.refreshLeaseUntil, now)),
      ),
    )
    .run();
  return won.meta.changes > 0;
}

/** Refreshes through the SDK's `auth` (stored tokens, refresh grant); a failure marks the server needs_auth. The lease is released either way. */
async function refreshHoldingLease(env: Env, db: Database, row: McpServer): Promise<string> {
  try {
    const { auth } = await import("@modelcontextprotocol/sdk/client/auth.js");
    const provider = new StoredOAuthProvider(env, db, row, "refresh");
    let result: string;
    try {
      result = await auth(provider, { serverUrl: row.url, fetchFn: mcpFetch(env) });
    } catch (e) {
      throw new McpAuthRequired(`Refreshing the server's token failed (${safeMessage(e)}); an administrator must connect it again`);
    }
    if (result !== "AUTHORIZED") throw new McpAuthRequired("The server refused to refresh the token; an administrator must connect it again");
    const t = await accessTokenOf(env, (await getMcpServer(db, row.id))!);
    if (!t) throw new McpAuthRequired();
    return t.access_token;
  } catch (e) {
    if (e instanceof McpAuthRequired) await setMcpStatus(db, row.id, "needs_auth", e.message);
    throw e;
  } finally {
    await db.update(mcpServers).set({ refreshLeaseUntil: null }).where(eq(mcpServers.id, row.id));
  }
}

/** Someone else refreshes (or already did): use their token once it is there; if they give up, try once ourselves. */
async function awaitOthersRefresh(env: Env, db: Database, row: McpServer, opts: { force?: boolean; signal?: AbortSignal }): Promise<string> {
  for (let i = 0; i < 60; i++) {
    opts.signal?.throwIfAborted();
    const current = await getMcpServer(db, row.id);
    if (!current) throw new McpAuthRequired("The MCP server registration was deleted");
    if (current.oauthTokenVersion !== row.oauthTokenVersion) {
      const t = await accessTokenOf(env, current);
      if (t) return t.access_token;
      throw new McpAuthRequired();
    }
    if (current.status === "needs_auth") throw new McpAuthRequired(current.lastError ?? undefined);
    if (!current.refreshLeaseUntil || current.refreshLeaseUntil < Date.now()) return freshAccessToken(env, db, current, opts);
    await sleep(250);
  }
  throw new McpAuthRequired("Timed out waiting for the token refresh");
}
