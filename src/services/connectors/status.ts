import { and, eq, inArray } from "drizzle-orm";
import { connectorConnections } from "../../db/schema";
import { notFound } from "../../lib/errors";
import { decryptSecret, openOptional } from "../../lib/secrets";
import { connectorBySlug } from "./catalog";
import { clientCredentials, endpointsOf } from "./config";
import { providerFetch } from "./http";
import { ProviderError } from "./types";
import { markDisconnected } from "./use";
import { connectionOf, definitionOrThrow } from "./connect";
import { aad, type Ctx, type Owner } from "./connections";

/** Connection status of an owner's apps, and disconnecting one (revoking at the provider where it offers revocation). */

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
