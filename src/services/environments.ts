import type { Context } from "hono";
import type { AuthorizeOptions } from "../auth/authorize";
import { loadAuthorized } from "../auth/load";
import type { Permission } from "../auth/permissions";
import type { AppEnv } from "../types";
import { isUniqueViolation } from "../db/errors";
import { and, asc, eq, sql } from "drizzle-orm";
import type { ResourceScope } from "../auth/resources";
import type { Database } from "../db/client";
import { environments, tenants, type Environment } from "../db/schema";
import { conflict, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export function publicEnvironment(e: Environment) {
  return {
    id: e.id,
    organization_id: e.organizationId,
    name: e.name,
    is_default: e.isDefault,
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
  c: Context<AppEnv>,
  id: string,
  permission: Permission,
  opts: AuthorizeOptions = {},
): Promise<Environment> {
  const env = await getEnvironment(c.get("db"), id);
  return (await loadAuthorized(c, permission, env, (e) => environmentScope(e)!, { what: "Environment", ...opts })).row;
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
  const env: Environment = { id: newId("env"), organizationId, name, isDefault: false, createdAt: now, updatedAt: now };
  try {
    await db.insert(environments).values(env);
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateName(name);
    throw e;
  }
  return env;
}

export async function renameEnvironment(db: Database, id: string, name: string): Promise<Environment> {
  try {
    const row = await db
      .update(environments)
      .set({ name, updatedAt: nowIso() })
      .where(eq(environments.id, id))
      .returning()
      .get();
    if (!row) throw notFound("Environment");
    return row;
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateName(name);
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
