import type { AuthorizeOptions } from "../auth/authorize";
import type { ServiceContext } from "../contracts/context";
import { loadAuthorized } from "../auth/load";
import type { Permission } from "../auth/permissions";
import { isUniqueViolation } from "../db/errors";
import { and, asc, eq, sql } from "drizzle-orm";
import type { ResourceScope } from "../auth/resources";
import type { Database } from "../db/client";
import { environments, organizationMembers, tenants, type Environment } from "../db/schema";
import type { Caller } from "../contracts/caller";
import { conflict, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export function publicEnvironment(e: Environment) {
  return {
    id: e.id,
    organization_id: e.organizationId,
    name: e.name,
    is_default: e.isDefault,
    allowed_redirect_origins: e.allowedRedirectOrigins,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

export const environmentScope = (e: Environment | undefined | null): ResourceScope | null =>
  e ? { organizationId: e.organizationId, environmentId: e.id } : null;

const duplicateName = (name: string) =>
  conflict("conflict", `An environment named '${name}' already exists in this organization`);

export async function getEnvironment(db: Database, id: string) {
  return db.select().from(environments).where(eq(environments.id, id)).get();
}

/** An environment by id, authorized for `permission` (404 when missing or out of reach). */
export async function environmentFor(
  ctx: ServiceContext,
  id: string,
  permission: Permission,
  opts: AuthorizeOptions = {},
): Promise<Environment> {
  const env = await getEnvironment(ctx.db, id);
  return (await loadAuthorized(ctx, permission, env, (e) => environmentScope(e)!, { what: "Environment", ...opts })).row;
}

export async function listEnvironments(db: Database, organizationId: string) {
  return db
    .select()
    .from(environments)
    .where(eq(environments.organizationId, organizationId))
    .orderBy(asc(environments.createdAt))
    .all();
}

export async function createEnvironment(db: Database, organizationId: string, name: string): Promise<Environment> {
  const now = nowIso();
  const env: Environment = { id: newId("env"), organizationId, name, isDefault: false, allowedRedirectOrigins: [], createdAt: now, updatedAt: now };
  try {
    await db.insert(environments).values(env);
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateName(name);
    throw e;
  }
  return env;
}

export async function updateEnvironment(db: Database, id: string, input: { name?: string; allowed_redirect_origins?: string[] }): Promise<Environment> {
  const { name } = input;
  const set: Partial<Environment> = { updatedAt: nowIso() };
  if (name !== undefined) set.name = name;
  if (input.allowed_redirect_origins !== undefined) set.allowedRedirectOrigins = [...new Set(input.allowed_redirect_origins)];
  try {
    const row = await db
      .update(environments)
      .set(set)
      .where(eq(environments.id, id))
      .returning()
      .get();
    if (!row) throw notFound("Environment");
    return row;
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateName(name ?? "");
    throw e;
  }
}

/** Refused with 409 while the environment still has tenants (checked in the same statement). */
export async function deleteEnvironment(db: Database, id: string): Promise<void> {
  const deleted = await db
    .delete(environments)
    .where(and(eq(environments.id, id), sql`NOT EXISTS (SELECT 1 FROM ${tenants} WHERE ${tenants.environmentId} = ${id})`))
    .returning({ id: environments.id })
    .get();
  if (!deleted) {
    throw conflict("environment_not_empty", "The environment still has tenants; delete or move them first");
  }
}

/**
 * The https origins where a caller's connect flows may end: a key's environment's
 * `allowed_redirect_origins`; for a signed-in user (whose connections belong to no one environment),
 * those of every environment of the organizations they belong to.
 */
export async function allowedRedirectOriginsOf(db: Database, caller: Caller): Promise<string[]> {
  const rows =
    caller.type === "api_key"
      ? await db.select({ origins: environments.allowedRedirectOrigins }).from(environments).where(eq(environments.id, caller.key.environmentId)).all()
      : await db
          .select({ origins: environments.allowedRedirectOrigins })
          .from(environments)
          .innerJoin(organizationMembers, eq(organizationMembers.organizationId, environments.organizationId))
          .where(eq(organizationMembers.userId, caller.user.id))
          .all();
  return [...new Set(rows.flatMap((r) => r.origins ?? []))];
}
