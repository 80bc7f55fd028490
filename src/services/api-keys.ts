import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import type { ServiceContext } from "../contracts/context";
import { loadAuthorized } from "../auth/load";
import type { Permission } from "../auth/permissions";
import type { KeyCaller } from "../contracts/caller";
import { resolveScope } from "../auth/resources";
import type { Scope } from "../contracts/scopes";
import type { Database } from "../db/client";
import { compiler, p } from "../db/compiled";
import { apiKeys, organizationMembers, organizations, tenants, type ApiKey, type Environment, type Role } from "../db/schema";
import { keyStillBacked, scopesBeyondRole } from "../contracts/access";
import { randomToken, sha256Hex } from "../lib/crypto";
import { ApiError, badRequest } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export const KEY_PREFIX = "kbk_";
const PREFIX_LENGTH = 12; // "kbk_" + 8 characters, enough to recognise a key in a list
/** last_used_at is written at most once a minute per key. */
const LAST_USED_GRANULARITY_MS = 60_000;

export function publicApiKey(k: ApiKey) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    organization_id: k.organizationId,
    environment_id: k.environmentId,
    scopes: k.scopes,
    tenant_ids: k.tenantIds,
    knowledge_base_id: k.knowledgeBaseId,
    expires_at: k.expiresAt,
    last_used_at: k.lastUsedAt,
    created_at: k.createdAt,
  };
}

export interface CreateKeyInput {
  name: string;
  scopes: Scope[];
  tenant_ids?: string[];
  knowledge_base_id?: string | null;
  expires_at?: string | null;
}

/** 403 naming the scope(s) when the minting member's role may not grant them (src/contracts/access.ts). */
export function assertRoleMayGrant(role: Role | null, scopes: readonly string[]): void {
  const beyond = scopesBeyondRole(role, scopes);
  if (!beyond.length) return;
  throw new ApiError("forbidden", `Your role (${role ?? "none"}) may not create a key with the scope${beyond.length > 1 ? "s" : ""} ${beyond.join(", ")}`, {
    details: beyond.map((s) => ({ path: `body.scopes.${scopes.indexOf(s)}`, message: `${s}: beyond your role` })),
  });
}

export async function createApiKey(
  db: Database,
  env: Environment,
  input: CreateKeyInput,
  createdBy: string,
): Promise<{ key: string; record: ApiKey }> {
  const tenantIds = [...new Set(input.tenant_ids ?? [])];
  if (tenantIds.length > 0) {
    const found = await db
      .select({ id: tenants.id })
      .from(tenants)
      .where(and(eq(tenants.environmentId, env.id), inArray(tenants.id, tenantIds)))
      .all();
    const known = new Set(found.map((t) => t.id));
    const unknown = tenantIds.filter((id) => !known.has(id));
    if (unknown.length) {
      throw badRequest(`tenant_ids: not tenants of this environment: ${unknown.join(", ")}`, [
        { path: "body.tenant_ids", message: `Unknown tenant(s) in this environment: ${unknown.join(", ")}` },
      ]);
    }
  }

  let knowledgeBaseId: string | null = null;
  if (input.knowledge_base_id) {
    const kb = await resolveScope(db, "knowledge_base", input.knowledge_base_id);
    if (!kb || kb.environmentId !== env.id) {
      throw badRequest("knowledge_base_id: not a knowledge base of this environment", [
        { path: "body.knowledge_base_id", message: "Not a knowledge base of this environment" },
      ]);
    }
    if (tenantIds.length > 0 && !tenantIds.includes(kb.tenantId!)) {
      throw badRequest("knowledge_base_id: the knowledge base's tenant is not in tenant_ids", [
        { path: "body.knowledge_base_id", message: "The knowledge base's tenant is not in tenant_ids" },
      ]);
    }
    knowledgeBaseId = input.knowledge_base_id;
    // A key restricted to one knowledge base reaches only that knowledge base's tenant.
    if (tenantIds.length === 0) tenantIds.push(kb.tenantId!);
  }

  if (input.expires_at && Date.parse(input.expires_at) <= Date.now()) {
    throw badRequest("expires_at must be in the future", [{ path: "body.expires_at", message: "Must be in the future" }]);
  }

  const key = KEY_PREFIX + randomToken(32);
  const record: ApiKey = {
    id: newId("key"),
    organizationId: env.organizationId,
    environmentId: env.id,
    name: input.name,
    prefix: key.slice(0, PREFIX_LENGTH),
    keyHash: await sha256Hex(key),
    scopes: [...new Set(input.scopes)],
    tenantIds,
    knowledgeBaseId,
    expiresAt: input.expires_at ? new Date(input.expires_at).toISOString() : null,
    revokedAt: null,
    lastUsedAt: null,
    createdBy,
    createdAt: nowIso(),
  };
  await db.insert(apiKeys).values(record);
  return { key, record };
}

export async function listApiKeys(db: Database, environmentId: string): Promise<ApiKey[]> {
  return db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.environmentId, environmentId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt))
    .all();
}

export async function getApiKey(db: Database, id: string): Promise<ApiKey | undefined> {
  return db.select().from(apiKeys).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))).get();
}

/** An API key by id, authorized for `permission` on its environment (404 when missing or out of reach). */
export async function apiKeyFor(ctx: ServiceContext, id: string, permission: Permission): Promise<ApiKey> {
  const key = await getApiKey(ctx.db, id);
  const scopeOf = (k: ApiKey) => ({ organizationId: k.organizationId, environmentId: k.environmentId });
  return (await loadAuthorized(ctx, permission, key, scopeOf, { what: "API key" })).row;
}

export async function revokeApiKey(db: Database, id: string): Promise<void> {
  await db.update(apiKeys).set({ revokedAt: nowIso() }).where(eq(apiKeys.id, id));
}

/**
 * Resolves a bearer token. Unknown, revoked and expired keys all answer 401;
 * revocation takes effect on the very next request because nothing is cached.
 */
export async function resolveApiKey(
  db: Database,
  token: string,
  /** sha256Hex(token), when the caller has it already (the caller cache's key). */
  tokenHash?: string,
): Promise<{ caller: KeyCaller; touch: Promise<unknown> | null }> {
  if (!token.startsWith(KEY_PREFIX) || token.length > 200) throw new ApiError("unauthorized", "Invalid API key");
  return keyCallerOf(db, (await apiKeyLookup(db, tokenHash ?? (await sha256Hex(token))))[0]);
}

const keyLookup = compiler<{ hash: string }>()((db) =>
  db
    .select({ key: apiKeys, status: organizations.status, creatorRole: organizationMembers.role })
    .from(apiKeys)
    .innerJoin(organizations, eq(organizations.id, apiKeys.organizationId))
    .leftJoin(organizationMembers, and(eq(organizationMembers.organizationId, apiKeys.organizationId), eq(organizationMembers.userId, apiKeys.createdBy)))
    .where(eq(apiKeys.keyHash, p("hash"))),
);

/**
 * The read behind a key's caller: the key by its token's hash, its organization's status and its creator's role
 * (a query not yet sent: the caller cache lets it ride along a request's first batch, src/db/rider.ts). Every
 * request with a key makes it: its SQL is built once (src/db/compiled.ts).
 */
export function apiKeyLookup(db: Database, tokenHash: string) {
  return keyLookup(db, { hash: tokenHash });
}

export type ApiKeyRow = Awaited<ReturnType<typeof apiKeyLookup>>[number];

/** The caller of a key's row (apiKeyLookup), or the 401 of a missing, revoked, expired or unbacked key; `touch` updates last_used_at. */
export function keyCallerOf(db: Database, row: ApiKeyRow | undefined): { caller: KeyCaller; touch: Promise<unknown> | null } {
  if (!row) throw new ApiError("unauthorized", "Invalid API key");
  if (row.key.revokedAt) throw new ApiError("unauthorized", "This API key has been revoked");
  if (row.key.expiresAt && Date.parse(row.key.expiresAt) <= Date.now()) {
    throw new ApiError("unauthorized", "This API key has expired");
  }
  // A key never holds more than the member who made it: removed or demoted below it, the key stops.
  if (!keyStillBacked(row.creatorRole ?? null, row.key.scopes)) {
    throw new ApiError("unauthorized", "This API key no longer works: the member who created it left the organization or no longer holds its scopes");
  }
  const scopes = new Set(row.key.scopes as Scope[]);
  const caller: KeyCaller = {
    type: "api_key",
    key: row.key,
    scopes,
    isAdmin: scopes.has("admin:full"),
    organizationStatus: row.status,
  };
  let touch: Promise<unknown> | null = null;
  if (!row.key.lastUsedAt || Date.now() - Date.parse(row.key.lastUsedAt) > LAST_USED_GRANULARITY_MS) {
    const now = nowIso();
    row.key.lastUsedAt = now;
    touch = db.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, row.key.id)).run();
  }
  return { caller, touch };
}
