import { loadAuthorized } from "../auth/load";
import type { ServiceContext } from "../contracts/context";
import type { Permission } from "../auth/permissions";
import { isUniqueViolation } from "../db/errors";
import { asc, eq } from "drizzle-orm";
import type { Database } from "../db/client";
import { environments, organizationMembers, organizations, tenants, type Organization, type Role, type User } from "../db/schema";
import { config } from "../lib/config";
import { toMicro } from "../lib/credits";
import { conflict, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export function publicOrganization(o: Organization, role?: Role) {
  return {
    id: o.id,
    name: o.name,
    slug: o.slug,
    type: o.type,
    status: o.status,
    ...(role ? { role } : {}),
    created_at: o.createdAt,
    updated_at: o.updatedAt,
  };
}

export async function createOrganization(
  db: Database,
  user: User,
  input: { name: string; slug: string; type: Organization["type"] },
  credits: { starting: number; tenant: number },
): Promise<{ organization: Organization; environmentId: string; tenantId: string }> {
  const now = nowIso();
  const org: Organization = {
    id: newId("org"),
    name: input.name,
    slug: input.slug,
    type: input.type,
    status: "active",
    creditsTotal: toMicro(Math.max(0, credits.starting)),
    creditsRetired: 0,
    createdBy: user.id,
    createdAt: now,
    updatedAt: now,
  };
  const environmentId = newId("env");
  const tenantId = newId("ten");
  // The default tenant's allocation can never exceed the organization's pool.
  const tenantCredits = Math.min(org.creditsTotal, toMicro(Math.max(0, credits.tenant)));
  try {
    // One batch = one transaction: the organization never exists half-provisioned.
    await db.batch([
      db.insert(organizations).values(org),
      db.insert(organizationMembers).values({
        id: newId("mem"),
        organizationId: org.id,
        userId: user.id,
        role: "owner",
        createdAt: now,
        updatedAt: now,
      }),
      db.insert(environments).values({
        id: environmentId,
        organizationId: org.id,
        name: "default",
        isDefault: true,
        createdAt: now,
        updatedAt: now,
      }),
      db.insert(tenants).values({
        id: tenantId,
        organizationId: org.id,
        environmentId,
        name: "default",
        creditsPool: tenantCredits,
        isDefault: true,
        metadata: {},
        createdAt: now,
        updatedAt: now,
      }),
    ]);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict("slug_taken", `The slug '${input.slug}' is already taken`);
    throw e;
  }
  return { organization: org, environmentId, tenantId };
}

/** A new organization owned by the signed-in user, with its default environment and tenant and the starting credits. */
export async function createOrganizationFor(ctx: ServiceContext, user: User, input: { name: string; slug: string; type: Organization["type"] }) {
  const cfg = config(ctx.env);
  const credits = { starting: cfg.startingCredits, tenant: cfg.startingTenantCredits };
  const { organization, environmentId, tenantId } = await createOrganization(ctx.db, user, input, credits);
  return { ...publicOrganization(organization, "owner"), default_environment_id: environmentId, default_tenant_id: tenantId };
}

export async function listOrganizationsForUser(db: Database, userId: string) {
  return db
    .select({ organization: organizations, role: organizationMembers.role })
    .from(organizationMembers)
    .innerJoin(organizations, eq(organizations.id, organizationMembers.organizationId))
    .where(eq(organizationMembers.userId, userId))
    .orderBy(asc(organizations.createdAt))
    .all();
}

export async function getOrganization(db: Database, id: string): Promise<Organization | undefined> {
  return db.select().from(organizations).where(eq(organizations.id, id)).get();
}

/** An organization by id, authorized for `permission`, with the caller's role in it (null for keys). */
export async function organizationFor(
  ctx: ServiceContext,
  id: string,
  permission: Permission,
): Promise<{ organization: Organization; role: Role | null }> {
  const org = await getOrganization(ctx.db, id);
  const { row, access } = await loadAuthorized(ctx, permission, org, (o) => ({ organizationId: o.id }), { what: "Organization" });
  return { organization: row, role: access.role };
}

export async function updateOrganization(
  db: Database,
  id: string,
  patch: { name?: string; status?: Organization["status"] },
): Promise<Organization> {
  const set: Partial<Organization> = { updatedAt: nowIso() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.status !== undefined) set.status = patch.status;
  const row = await db.update(organizations).set(set).where(eq(organizations.id, id)).returning().get();
  if (!row) throw notFound("Organization");
  return row;
}

export async function deleteOrganization(db: Database, id: string): Promise<void> {
  await db.delete(organizations).where(eq(organizations.id, id));
}

// ---- Members and invitations -----------------------------------------------
