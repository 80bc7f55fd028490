import { asc, eq, sql, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import { organizations, tenants, type Organization, type Tenant } from "../../db/schema";
import { fromMicro } from "../../lib/credits";
import { ApiError, notFound } from "../../lib/errors";
import { monthPeriod, nowIso } from "../../lib/time";

/**
 * Credit allocation. The only stored state is each tenant's pool and usage and
 * the organization's total and retired credits; "allocated" and "available"
 * are derived, so they can never drift:
 *
 *   allocated = sum(tenant pools) + retired      (retired = used credits of deleted tenants)
 *   used      = sum(tenant used)  + retired
 *   available = total - allocated
 *
 * Every change that must respect the organization's available credits is one
 * conditional SQL statement, so concurrent allocations can never overdraw it.
 */
export const orgAvailableMicro = (organizationId: SQL | string): SQL => sql`(
  SELECT o.credits_total - o.credits_retired
    - (SELECT COALESCE(SUM(t2.credits_pool), 0) FROM tenants t2 WHERE t2.organization_id = o.id)
  FROM organizations o WHERE o.id = ${organizationId}
)`;

export const insufficientOrganizationCredits = () =>
  new ApiError(
    "insufficient_organization_credits",
    "The organization does not have enough available credits; add credits to the organization first",
  );

export function tenantCredits(t: Pick<Tenant, "id" | "creditsPool" | "creditsUsed">) {
  return {
    tenant_id: t.id,
    credits_pool: fromMicro(t.creditsPool),
    credits_used: fromMicro(t.creditsUsed),
    credits_available: fromMicro(t.creditsPool - t.creditsUsed),
  };
}

/** Adds credits to the organization's pool; returns the organization as it is now. */
export async function addOrganizationCredits(db: Database, organizationId: string, micro: number): Promise<Organization> {
  const row = await db
    .update(organizations)
    .set({ creditsTotal: sql`${organizations.creditsTotal} + ${micro}`, updatedAt: nowIso() })
    .where(eq(organizations.id, organizationId))
    .returning()
    .get();
  if (!row) throw notFound("Organization");
  return row;
}

/** Moves available organization credits into a tenant's pool. */
export async function allocateToTenant(db: Database, tenant: Tenant, micro: number): Promise<Tenant> {
  const row = await db
    .update(tenants)
    .set({ creditsPool: sql`${tenants.creditsPool} + ${micro}`, updatedAt: nowIso() })
    .where(sql`${tenants.id} = ${tenant.id} AND ${micro} <= ${orgAvailableMicro(tenant.organizationId)}`)
    .returning()
    .get();
  if (!row) {
    const exists = await db.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenant.id)).get();
    if (!exists) throw notFound("Tenant");
    throw insufficientOrganizationCredits();
  }
  return row;
}

export async function organizationBilling(db: Database, org: Organization) {
  const rows = await db
    .select({ id: tenants.id, name: tenants.name, creditsPool: tenants.creditsPool, creditsUsed: tenants.creditsUsed })
    .from(tenants)
    .where(eq(tenants.organizationId, org.id))
    .orderBy(asc(tenants.createdAt))
    .all();
  const pools = rows.reduce((s, t) => s + t.creditsPool, 0);
  const used = rows.reduce((s, t) => s + t.creditsUsed, 0);
  const allocated = pools + org.creditsRetired;
  return {
    organization_id: org.id,
    period: monthPeriod(),
    status: org.status,
    total_credits: fromMicro(org.creditsTotal),
    allocated_credits: fromMicro(allocated),
    used_credits: fromMicro(used + org.creditsRetired),
    available_credits: fromMicro(org.creditsTotal - allocated),
    tenants: rows.map((t) => ({ name: t.name, ...tenantCredits(t) })),
  };
}
