import { visibleTenantIds, type AuthorizeOptions } from "../auth/authorize";
import type { ServiceContext } from "../contracts/context";
import { loadAuthorized } from "../auth/load";
import type { Permission } from "../auth/permissions";
import { isUniqueViolation } from "../db/errors";
import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import type { ResourceScope } from "../auth/resources";
import type { Database } from "../db/client";
import { organizations, tenants, type Tenant } from "../db/schema";
import { fromMicro, toMicro } from "../lib/credits";
import { badRequest, conflict, forbidden, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { insufficientOrganizationCredits, orgAvailableMicro } from "./billing/credits";
import { environmentFor } from "./environments";
import { pageOf } from "../db/page";

/** Default quotas (API-DECISIONS.md). */
export const DEFAULT_QUOTAS = { maxKnowledgeBases: 100, maxDocuments: 10_000, maxStorageGb: 10 };
/** Quotas are in decimal gigabytes. */
export const BYTES_PER_GB = 1_000_000_000;

export function publicTenant(t: Tenant) {
  return {
    id: t.id,
    organization_id: t.organizationId,
    environment_id: t.environmentId,
    name: t.name,
    external_id: t.externalId,
    external_name: t.externalName,
    credits_pool: fromMicro(t.creditsPool),
    credits_used: fromMicro(t.creditsUsed),
    credits_available: fromMicro(t.creditsPool - t.creditsUsed),
    max_knowledge_bases: t.maxKnowledgeBases,
    max_documents: t.maxDocuments,
    max_storage_gb: t.maxStorageGb,
    metadata: t.metadata,
    knowledge_base_count: t.knowledgeBaseCount,
    document_count: t.documentCount,
    storage_used_bytes: t.storageUsedBytes,
    is_default: t.isDefault,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
  };
}

export const tenantScope = (t: Pick<Tenant, "id" | "organizationId" | "environmentId"> | undefined | null): ResourceScope | null =>
  t ? { organizationId: t.organizationId, environmentId: t.environmentId, tenantId: t.id } : null;

export async function getTenant(db: Database, id: string): Promise<Tenant | undefined> {
  return db.select().from(tenants).where(eq(tenants.id, id)).get();
}

/**
 * A tenant by id, authorized for `permission`. Pass `{ addressedBy: "param" }`
 * when the caller named it in a `tenant_id` parameter (403 for a key that may
 * not use it) rather than in the path (404).
 */
export async function tenantFor(ctx: ServiceContext, id: string, permission: Permission, opts: AuthorizeOptions = {}): Promise<Tenant> {
  const tenant = await getTenant(ctx.db, id);
  return (await loadAuthorized(ctx, permission, tenant, (t) => tenantScope(t)!, { what: "Tenant", ...opts })).row;
}

export async function listTenants(
  db: Database,
  environmentId: string,
  visibleIds: string[] | null,
  page: { limit: number; offset: number },
) {
  const where = visibleIds
    ? and(eq(tenants.environmentId, environmentId), inArray(tenants.id, visibleIds.length ? visibleIds : ["-"]))
    : eq(tenants.environmentId, environmentId);
  return pageOf(db, tenants, where, [asc(tenants.createdAt), asc(tenants.id)], page);
}

export interface TenantInput {
  name?: string;
  external_id?: string | null;
  external_name?: string | null;
  credits_pool?: number;
  max_knowledge_bases?: number;
  max_documents?: number;
  max_storage_gb?: number;
  metadata?: Record<string, unknown>;
}

const externalIdTaken = (externalId: string) =>
  conflict("conflict", `A tenant with external_id '${externalId}' already exists in this environment`);

/**
 * GET /tenants: the tenants of an environment the caller may see. A user names
 * the environment; a key defaults to (and must match) its own.
 */
export async function listTenantsFor(ctx: ServiceContext, q: { env_id?: string; limit: number; offset: number }) {
  const caller = ctx.caller;
  let envId = q.env_id;
  if (!envId) {
    if (caller.type === "user") {
      throw badRequest("query.env_id: Required for a user session", [{ path: "query.env_id", message: "Required for a user session" }]);
    }
    envId = caller.key.environmentId;
  }
  const env = await environmentFor(ctx, envId, "tenants:read", { addressedBy: "param" });
  return listTenants(ctx.db, env.id, visibleTenantIds(caller), q);
}

/** POST /tenants: in an environment the caller may write to; a key limited to some tenants cannot create others. */
export async function createTenantFor(ctx: ServiceContext, input: TenantInput & { environment_id: string; name: string }) {
  const env = await environmentFor(ctx, input.environment_id, "tenants:write", { addressedBy: "param" });
  const caller = ctx.caller;
  if (caller.type === "api_key" && !caller.isAdmin && caller.key.tenantIds.length > 0) {
    throw forbidden("An API key limited to specific tenants cannot create tenants");
  }
  return createTenant(ctx.db, { organizationId: env.organizationId, environmentId: env.id }, input);
}

export async function createTenant(
  db: Database,
  scope: { organizationId: string; environmentId: string },
  input: TenantInput & { name: string },
): Promise<Tenant> {
  const now = nowIso();
  const pool = toMicro(input.credits_pool ?? 0);
  const t: Tenant = {
    id: newId("ten"),
    organizationId: scope.organizationId,
    environmentId: scope.environmentId,
    name: input.name,
    externalId: input.external_id ?? null,
    externalName: input.external_name ?? null,
    creditsPool: pool,
    creditsUsed: 0,
    maxKnowledgeBases: input.max_knowledge_bases ?? DEFAULT_QUOTAS.maxKnowledgeBases,
    maxDocuments: input.max_documents ?? DEFAULT_QUOTAS.maxDocuments,
    maxStorageGb: input.max_storage_gb ?? DEFAULT_QUOTAS.maxStorageGb,
    knowledgeBaseCount: 0,
    documentCount: 0,
    storageUsedBytes: 0,
    metadata: input.metadata ?? {},
    isDefault: false,
    createdAt: now,
    updatedAt: now,
  };
  try {
    // The allocation check and the insert are one statement: concurrent
    // creations can never allocate more than the organization has.
    const res = await db.run(sql`
      INSERT INTO tenants (id, organization_id, environment_id, name, external_id, external_name,
        credits_pool, credits_used, max_knowledge_bases, max_documents, max_storage_gb,
        knowledge_base_count, document_count, storage_used_bytes, metadata, is_default, created_at, updated_at)
      SELECT ${t.id}, ${t.organizationId}, ${t.environmentId}, ${t.name}, ${t.externalId}, ${t.externalName},
        ${pool}, 0, ${t.maxKnowledgeBases}, ${t.maxDocuments}, ${t.maxStorageGb},
        0, 0, 0, ${JSON.stringify(t.metadata)}, 0, ${now}, ${now}
      WHERE ${pool} = 0 OR ${pool} <= ${orgAvailableMicro(scope.organizationId)}`);
    if (!res.meta.changes) throw insufficientOrganizationCredits();
  } catch (e) {
    if (isUniqueViolation(e) && t.externalId) throw externalIdTaken(t.externalId);
    throw e;
  }
  return t;
}

export async function updateTenant(db: Database, tenant: Tenant, input: TenantInput): Promise<Tenant> {
  const set: Record<string, unknown> = { updatedAt: nowIso() };
  if (input.name !== undefined) set.name = input.name;
  if (input.external_id !== undefined) set.externalId = input.external_id;
  if (input.external_name !== undefined) set.externalName = input.external_name;
  if (input.max_knowledge_bases !== undefined) set.maxKnowledgeBases = input.max_knowledge_bases;
  if (input.max_documents !== undefined) set.maxDocuments = input.max_documents;
  if (input.max_storage_gb !== undefined) set.maxStorageGb = input.max_storage_gb;
  if (input.metadata !== undefined) set.metadata = input.metadata;

  const conditions: SQL[] = [sql`${tenants.id} = ${tenant.id}`];
  if (input.credits_pool !== undefined) {
    const pool = toMicro(input.credits_pool);
    set.creditsPool = pool;
    // Never below what is already used; raising takes from the organization's available credits.
    conditions.push(sql`${pool} >= ${tenants.creditsUsed}`);
    conditions.push(
      sql`(${pool} <= ${tenants.creditsPool} OR ${pool} - ${tenants.creditsPool} <= ${orgAvailableMicro(tenant.organizationId)})`,
    );
  }
  let row: Tenant | undefined;
  try {
    row = await db.update(tenants).set(set).where(and(...conditions)).returning().get();
  } catch (e) {
    if (isUniqueViolation(e) && input.external_id) throw externalIdTaken(input.external_id);
    throw e;
  }
  if (row) return row;
  const current = await getTenant(db, tenant.id);
  if (!current) throw notFound("Tenant");
  if (input.credits_pool !== undefined && toMicro(input.credits_pool) < current.creditsUsed) {
    throw badRequest(
      `credits_pool cannot be lower than credits_used (${fromMicro(current.creditsUsed)})`,
      [{ path: "body.credits_pool", message: "Cannot be lower than credits_used" }],
    );
  }
  throw insufficientOrganizationCredits();
}

/**
 * Deletes the tenant and (by cascade) everything it owns. Its unused
 * allocation returns to the organization; its used credits stay counted as
 * allocated and used (credits_retired), in the same transaction.
 */
export async function deleteTenant(db: Database, tenant: Tenant): Promise<void> {
  await db.batch([
    db
      .update(organizations)
      .set({
        creditsRetired: sql`${organizations.creditsRetired} + COALESCE((SELECT credits_used FROM tenants WHERE id = ${tenant.id}), 0)`,
      })
      .where(eq(organizations.id, tenant.organizationId)),
    db.delete(tenants).where(eq(tenants.id, tenant.id)),
  ]);
}
