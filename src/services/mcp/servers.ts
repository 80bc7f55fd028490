import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import { authorize } from "../../auth/authorize";
import { loadAuthorized } from "../../auth/load";
import type { Permission } from "../../auth/permissions";
import { registerResource, type ResourceScope } from "../../auth/resources";
import type { Database } from "../../db/client";
import { chats, mcpServers, organizations, type Chat, type McpServer, type McpStatus, type McpToolManifestEntry } from "../../db/schema";
import type { Env } from "../../env";
import { badRequest } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { encryptSecret } from "../../lib/secrets";
import { nowIso } from "../../lib/time";

/** Enabled MCP servers per chat (specification, limits). */
export const MAX_ENABLED_PER_CHAT = 25;
/** A manifest older than this is refreshed when the server is used. */
export const MANIFEST_MAX_AGE_MS = 60 * 60 * 1000;

export const mcpServerScope = (s: Pick<McpServer, "organizationId"> | undefined | null): ResourceScope | null =>
  s ? { organizationId: s.organizationId } : null;

registerResource("mcp_server", async (db, id) => mcpServerScope(await getMcpServer(db, id)));

/** The public view of a registration: never any credential, token or OAuth state. */
export function publicMcpServer(s: McpServer) {
  return {
    id: s.id,
    organization_id: s.organizationId,
    name: s.name,
    url: s.url,
    status: s.status,
    auth: s.auth,
    tool_count: s.toolCount,
    manifest_refreshed_at: s.manifestRefreshedAt,
    last_error: s.lastError,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

export async function getMcpServer(db: Database, id: string): Promise<McpServer | undefined> {
  return db.select().from(mcpServers).where(eq(mcpServers.id, id)).get();
}

/**
 * The organization named by `org_id` (a query parameter), authorized for
 * `permission`: 404 when the caller is not a member, 403 for a role that may not.
 */
export async function authorizeOrganization(ctx: ServiceContext, orgId: string, permission: Permission) {
  const org = await ctx.db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, orgId)).get();
  await authorize(ctx, permission, org ? { organizationId: org.id } : null, { what: "Organization" });
  return org!.id;
}

/**
 * A registration by id, authorized for `permission`. When the route also names
 * `org_id`, a registration of another organization is 404 as well.
 */
export async function mcpServerFor(ctx: ServiceContext, id: string, orgId: string | undefined, permission: Permission): Promise<McpServer> {
  const row = await getMcpServer(ctx.db, id);
  const visible = row && (!orgId || row.organizationId === orgId) ? row : undefined;
  return (await loadAuthorized(ctx, permission, visible, (s) => mcpServerScope(s)!, { what: "MCP server" })).row;
}

export async function listMcpServers(db: Database, organizationId: string): Promise<McpServer[]> {
  return db.select().from(mcpServers).where(eq(mcpServers.organizationId, organizationId)).orderBy(asc(mcpServers.createdAt), asc(mcpServers.id)).all();
}

export async function createMcpServer(
  db: Database,
  env: Env,
  input: { organizationId: string; name: string; url: string; credentials?: string | null; createdBy: string },
): Promise<McpServer> {
  const id = newId("mcp");
  const now = nowIso();
  const credentialsEnc = input.credentials ? await encryptSecret(env, input.credentials, `mcp_server:${id}`) : null;
  const row = {
    id,
    organizationId: input.organizationId,
    name: input.name,
    url: input.url,
    auth: credentialsEnc ? ("credentials" as const) : ("none" as const),
    status: "pending" as const,
    credentialsEnc,
    createdBy: input.createdBy,
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(mcpServers).values(row);
  return (await getMcpServer(db, id))!;
}

export async function deleteMcpServer(db: Database, id: string): Promise<void> {
  await db.delete(mcpServers).where(eq(mcpServers.id, id));
}

export async function updateMcpServer(db: Database, id: string, set: Partial<McpServer>): Promise<void> {
  await db.update(mcpServers).set({ ...set, updatedAt: nowIso() }).where(eq(mcpServers.id, id));
}

export async function setMcpStatus(db: Database, id: string, status: McpStatus, lastError: string | null): Promise<void> {
  await updateMcpServer(db, id, { status, lastError: lastError ? lastError.slice(0, 1000) : null });
}

export async function saveManifest(db: Database, id: string, tools: McpToolManifestEntry[], transport: string): Promise<void> {
  await updateMcpServer(db, id, {
    manifest: tools,
    toolCount: tools.length,
    manifestRefreshedAt: nowIso(),
    transport,
    status: "ready",
    lastError: null,
  });
}

export const manifestIsStale = (s: McpServer, now = Date.now()) =>
  !s.manifestRefreshedAt || now - Date.parse(s.manifestRefreshedAt) > MANIFEST_MAX_AGE_MS;

// ---- Per-chat enabled servers (chats.settings.enabled_mcp_server_ids) --------

/** Registrations of `organizationId` among `ids`, in the order given; deleted ones simply drop out. */
export async function serversOfOrganization(db: Database, organizationId: string, ids: string[]): Promise<McpServer[]> {
  if (!ids.length) return [];
  const rows = await db
    .select()
    .from(mcpServers)
    .where(and(eq(mcpServers.organizationId, organizationId), inArray(mcpServers.id, [...new Set(ids)].slice(0, 100))))
    .all();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return [...new Set(ids)].map((id) => byId.get(id)).filter((r): r is McpServer => !!r);
}

/**
 * Refuses ids that are not registrations of the organization (400 naming the
 * first one, and a detail per id). Used by PATCH /chats/:id/mcp-servers and by
 * the tool provider's up-front validation (chats and agents).
 */
export async function assertServersOfOrganization(db: Database, organizationId: string, ids: string[], path: string): Promise<void> {
  if (ids.length > MAX_ENABLED_PER_CHAT) {
    throw badRequest(`At most ${MAX_ENABLED_PER_CHAT} MCP servers can be enabled`, [{ path, message: `At most ${MAX_ENABLED_PER_CHAT} items` }]);
  }
  const known = new Set((await serversOfOrganization(db, organizationId, ids)).map((s) => s.id));
  const foreign = [...new Set(ids)].filter((id) => !known.has(id));
  if (foreign.length) {
    throw badRequest(
      `MCP server ${foreign[0]} is not registered in the chat's organization`,
      foreign.map((id) => ({ path, message: `${id} is not an MCP server of this organization` })),
    );
  }
}

/**
 * At turn time: refuses ids registered in ANOTHER organization (400 naming them);
 * ids that no longer exist are deleted registrations and are simply left out
 * (a chat's list was checked when it was set). New lists (PATCH, agent creation)
 * use the strict `assertServersOfOrganization`.
 */
export async function assertNoForeignServers(db: Database, organizationId: string, ids: string[], path: string): Promise<void> {
  if (!ids.length) return;
  const unique = [...new Set(ids)].slice(0, 100);
  const rows = await db.select({ id: mcpServers.id, org: mcpServers.organizationId }).from(mcpServers).where(inArray(mcpServers.id, unique)).all();
  const foreign = rows.filter((r) => r.org !== organizationId).map((r) => r.id);
  if (foreign.length) {
    throw badRequest(
      `MCP server ${foreign[0]} is not registered in the chat's organization`,
      foreign.map((id) => ({ path, message: `${id} is not an MCP server of this organization` })),
    );
  }
}

/** The chat's enabled list, with registrations that no longer exist left out. */
export async function enabledServersOfChat(db: Database, chat: Chat): Promise<McpServer[]> {
  return serversOfOrganization(db, chat.organizationId, chat.settings?.enabled_mcp_server_ids ?? []);
}

/** Replaces the chat's enabled list (settings JSON, other keys kept). */
export async function setEnabledServersOfChat(db: Database, chat: Chat, ids: string[]): Promise<void> {
  const unique = [...new Set(ids)];
  await db
    .update(chats)
    .set({
      settings: sql`json_set(coalesce(${chats.settings}, '{}'), '$.enabled_mcp_server_ids', json(${JSON.stringify(unique)}))`,
      updatedAt: nowIso(),
    })
    .where(eq(chats.id, chat.id));
}

export function chatServerView(servers: McpServer[], enabled: Set<string>) {
  return servers.map((s) => ({ id: s.id, name: s.name, url: s.url, status: s.status, tool_count: s.toolCount, enabled: enabled.has(s.id) }));
}

/** The organization's servers, each marked with whether this chat enables it. */
export async function serversOfChat(db: Database, chat: Chat) {
  const [all, enabled] = await Promise.all([listMcpServers(db, chat.organizationId), enabledServersOfChat(db, chat)]);
  return { servers: chatServerView(all, new Set(enabled.map((s) => s.id))) };
}

/** Replaces the chat's enabled servers; every id must be a registration of the chat's organization (400 naming it). */
export async function replaceServersOfChat(db: Database, chat: Chat, ids: string[]) {
  await assertServersOfOrganization(db, chat.organizationId, ids, "body.enabled_mcp_server_ids");
  await setEnabledServersOfChat(db, chat, ids);
  return { servers: chatServerView(await listMcpServers(db, chat.organizationId), new Set(ids)) };
}
