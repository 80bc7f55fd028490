import { and, desc, eq, gt, inArray, isNull, lt, ne } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import { authorize } from "../../auth/authorize";
import type { KeyCaller } from "../../contracts/caller";
import { MCP_OAUTH_SCOPE, type VerifiedOAuthToken } from "../../auth/oauth";
import { PERMISSIONS, type Permission } from "../../auth/permissions";
import type { Scope } from "../../contracts/scopes";
import type { Database } from "../../db/client";
import { pageOf, type Page } from "../../db/page";
import { mcpOAuthGrants, organizationMembers, organizations, type ApiKey, type McpOAuthGrant, type Role } from "../../db/schema";
import { forbidden, notFound, unauthorized } from "../../lib/errors";
import { newId } from "../../lib/ids";

/**
 * The service's record of the OAuth grants of the knowledge-base MCP endpoint (migrations/0018).
 * The authorization server (src/services/mcp-oauth/provider.ts) keeps clients, grants and tokens in
 * OAUTH_KV; the row is what makes a token worth anything: it names the member, the tenant and the
 * knowledge bases, and a token is honoured only while the row exists and its member still belongs to
 * the organization. The caller a token becomes is a key of that tenant with `query:rag` and
 * `documents:read`, limited to those knowledge bases, so the MCP tools authorize it through the one
 * authorization layer like any key.
 */

export { MCP_OAUTH_SCOPE };
/** What a token reaches: exactly a key with these scopes, limited to the grant's tenant and knowledge bases. */
export const OAUTH_KEY_SCOPES: readonly Scope[] = ["query:rag", "documents:read"];
/** A grant lapses this long after its last refresh (and after the code exchange). */
export const GRANT_IDLE_SECONDS = 30 * 24 * 3600;
/** Until the client redeems its authorization code (the provider's code lifetime). */
const CODE_SECONDS = 600;
/** The roles that may approve a grant, and whose grants keep working: those that may ask questions. */
const GRANTING_ROLES: readonly Role[] = PERMISSIONS["query:rag"].roles;

const isoIn = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();

export function publicGrant(g: McpOAuthGrant) {
  return {
    id: g.id,
    organization_id: g.organizationId,
    environment_id: g.environmentId,
    tenant_id: g.tenantId,
    knowledge_base_ids: g.knowledgeBaseIds,
    user_id: g.userId,
    client_id: g.clientId,
    client_name: g.clientName,
    redirect_host: g.redirectHost,
    scopes: g.scopes,
    created_at: g.createdAt,
    expires_at: g.expiresAt,
  };
}

export interface NewGrant {
  id: string;
  userId: string;
  organizationId: string;
  environmentId: string;
  tenantId: string;
  knowledgeBaseIds: string[];
  clientId: string;
  clientName: string;
  redirectHost: string;
  scopes: string[];
}

/**
 * Records a grant the member just approved. The provider replaces the member's earlier grant of the
 * same client (completeAuthorization revokes it), so its row goes too.
 */
export async function recordGrant(db: Database, g: NewGrant): Promise<McpOAuthGrant> {
  const row: McpOAuthGrant = { ...g, providerGrantId: null, createdAt: new Date().toISOString(), expiresAt: isoIn(CODE_SECONDS) };
  await db.batch([
    db.delete(mcpOAuthGrants).where(and(eq(mcpOAuthGrants.userId, g.userId), eq(mcpOAuthGrants.clientId, g.clientId), ne(mcpOAuthGrants.id, g.id))),
    db.insert(mcpOAuthGrants).values(row),
  ]);
  return row;
}

export const newGrantId = () => newId("oag");

/** The grant with its organization's status and its member's current role (null once they left). */
async function grantWithMember(db: Database, id: string) {
  return db
    .select({ g: mcpOAuthGrants, status: organizations.status, role: organizationMembers.role })
    .from(mcpOAuthGrants)
    .innerJoin(organizations, eq(organizations.id, mcpOAuthGrants.organizationId))
    .leftJoin(
      organizationMembers,
      and(eq(organizationMembers.userId, mcpOAuthGrants.userId), eq(organizationMembers.organizationId, mcpOAuthGrants.organizationId)),
    )
    .where(eq(mcpOAuthGrants.id, id))
    .get();
}

const memberMayUse = (role: Role | null) => !!role && GRANTING_ROLES.includes(role);

/**
 * At the code exchange and at every refresh (the provider's tokenExchangeCallback): false when the
 * grant was revoked or its member left, so the provider refuses with invalid_grant and drops the grant.
 * Otherwise links the provider's grant id and moves the expiry, as the provider does.
 */
export async function renewGrant(db: Database, ids: { grantId: string; userId: string; providerGrantId: string }): Promise<boolean> {
  const row = typeof ids.grantId === "string" ? await grantWithMember(db, ids.grantId) : undefined;
  if (!row || row.g.userId !== ids.userId || (row.g.providerGrantId && row.g.providerGrantId !== ids.providerGrantId)) return false;
  if (!memberMayUse(row.role)) {
    await db.delete(mcpOAuthGrants).where(eq(mcpOAuthGrants.id, row.g.id));
    return false;
  }
  await db
    .update(mcpOAuthGrants)
    .set({ providerGrantId: ids.providerGrantId, expiresAt: isoIn(GRANT_IDLE_SECONDS) })
    .where(eq(mcpOAuthGrants.id, row.g.id));
  return true;
}

/**
 * The caller a validated OAuth access token is (src/auth/middleware.ts): 401 when its grant was
 * revoked or its member no longer belongs to the organization. Nothing is cached.
 */
export async function resolveOAuthCaller(db: Database, token: VerifiedOAuthToken): Promise<KeyCaller> {
  const row = await grantWithMember(db, token.grantId);
  if (!row || row.g.userId !== token.userId || row.g.clientId !== token.clientId) {
    throw unauthorized("This authorization has been revoked; connect the client again");
  }
  if (!memberMayUse(row.role)) throw unauthorized("The member who authorized this client no longer belongs to the organization");
  if (!token.scope.includes(MCP_OAUTH_SCOPE)) throw forbidden(`This access token lacks the ${MCP_OAUTH_SCOPE} scope`);
  return oauthCaller(row.g, row.status);
}

/** A key of the grant's tenant with OAUTH_KEY_SCOPES, limited to its knowledge bases, carrying the grant. */
function oauthCaller(g: McpOAuthGrant, organizationStatus: KeyCaller["organizationStatus"]): KeyCaller {
  const key: ApiKey = {
    id: g.id,
    organizationId: g.organizationId,
    environmentId: g.environmentId,
    name: `OAuth: ${g.clientName}`,
    prefix: "oauth",
    keyHash: "",
    scopes: [...OAUTH_KEY_SCOPES],
    tenantIds: [g.tenantId],
    knowledgeBaseId: g.knowledgeBaseIds.length === 1 ? g.knowledgeBaseIds[0] : null,
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    createdBy: g.userId,
    createdAt: g.createdAt,
  };
  return {
    type: "api_key",
    key,
    scopes: new Set(OAUTH_KEY_SCOPES),
    isAdmin: false,
    organizationStatus,
    oauth: { grantId: g.id, userId: g.userId, clientId: g.clientId, knowledgeBaseIds: g.knowledgeBaseIds },
  };
}

/**
 * Whose grants the signed-in caller may see or revoke in an organization: owners all of them, other
 * members their own (404 for an organization they do not belong to).
 */
async function grantReach(ctx: ServiceContext, organizationId: string | undefined, permission: Permission, what: string) {
  const access = await authorize(ctx, permission, organizationId ? { organizationId } : null, { what });
  const userId = access.caller.type === "user" ? access.caller.user.id : null;
  return { organizationId: access.scope.organizationId, onlyUserId: access.role === "owner" ? null : userId };
}

/** GET /mcp/oauth/grants: the live grants of the organization the caller may see, newest first. */
export async function listGrantsFor(ctx: ServiceContext, orgId: string, page: Page) {
  const db = ctx.db;
  const org = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, orgId)).get();
  const { organizationId, onlyUserId } = await grantReach(ctx, org?.id, "mcp_oauth:read", "Organization");
  const where = and(
    eq(mcpOAuthGrants.organizationId, organizationId),
    gt(mcpOAuthGrants.expiresAt, new Date().toISOString()),
    onlyUserId ? eq(mcpOAuthGrants.userId, onlyUserId) : undefined,
  );
  return pageOf(db, mcpOAuthGrants, where, [desc(mcpOAuthGrants.createdAt), desc(mcpOAuthGrants.id)], page);
}

/** A grant the caller may revoke (DELETE /mcp/oauth/grants/:id): 404 when missing, elsewhere, or another member's. */
export async function grantToRevoke(ctx: ServiceContext, id: string, orgId: string): Promise<McpOAuthGrant> {
  const g = await ctx.db.select().from(mcpOAuthGrants).where(eq(mcpOAuthGrants.id, id)).get();
  const visible = g && g.organizationId === orgId ? g : undefined;
  const { onlyUserId } = await grantReach(ctx, visible?.organizationId, "mcp_oauth:revoke", "OAuth grant");
  if (!visible || (onlyUserId && visible.userId !== onlyUserId)) throw notFound("OAuth grant");
  return visible;
}

/** Deletes the rows (the token stops working at once); the caller also revokes the provider's grant. */
export async function deleteGrants(db: Database, ids: string[]): Promise<void> {
  if (ids.length) await db.delete(mcpOAuthGrants).where(inArray(mcpOAuthGrants.id, ids));
}

/** Rows whose lapse time passed (the provider's KV entries expire on their own). */
export async function purgeLapsedGrants(db: Database, at: Date): Promise<void> {
  await db.delete(mcpOAuthGrants).where(lt(mcpOAuthGrants.expiresAt, at.toISOString()));
}

/** Grants whose member left the organization, at most `limit`: to revoke. */
export async function grantsOfFormerMembers(db: Database, limit: number): Promise<McpOAuthGrant[]> {
  const rows = await db
    .select({ g: mcpOAuthGrants, role: organizationMembers.role })
    .from(mcpOAuthGrants)
    .leftJoin(
      organizationMembers,
      and(eq(organizationMembers.userId, mcpOAuthGrants.userId), eq(organizationMembers.organizationId, mcpOAuthGrants.organizationId)),
    )
    .where(isNull(organizationMembers.userId))
    .limit(limit)
    .all();
  return rows.map((r) => r.g);
}
