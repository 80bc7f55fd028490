import type { Access } from "../../auth/authorize";
import type { ServiceContext } from "../../contracts/context";
import { loadAuthorized } from "../../auth/load";
import type { Permission } from "../../auth/permissions";
import type { Memory, Tenant } from "../../db/schema";
import { notFound } from "../../lib/errors";
import { getTenant, tenantScope } from "../tenants";
import { getMemory } from "./memories";

/**
 * Who sees which memories in lists, graphs and deletions. A memory belongs to
 * one subject (an end user). Owners and billing admins of the organization
 * administer every subject's memories, and an API key — the application that
 * serves its end users — sees all of its reach (filterable by
 * `external_subject_id`); any other member sees only their own (`user:<id>`),
 * so a subject never sees another subject's memories.
 */
export const ADMIN_ROLES = ["owner", "billing_admin"] as const;

/** Matches no subject (a filter for another subject than the caller's own). */
const NOBODY = "\u0000nobody";

export function subjectFilter(access: Access, q: { subject_id?: string; external_subject_id?: string }): string | null {
  const ext = q.external_subject_id !== undefined ? `ext:${q.external_subject_id}` : undefined;
  if (q.subject_id !== undefined && ext !== undefined && q.subject_id !== ext) return NOBODY;
  const requested = q.subject_id ?? ext ?? null;
  const caller = access.caller;
  if (caller.type === "user" && !(ADMIN_ROLES as readonly string[]).includes(access.role ?? "")) {
    const own = `user:${caller.user.id}`;
    return requested === null || requested === own ? own : NOBODY;
  }
  return requested;
}

/** A tenant by id, authorized for `permission` (404 when missing or out of reach). */
export async function tenantFor(ctx: ServiceContext, id: string, permission: Permission): Promise<{ tenant: Tenant; access: Access }> {
  const t = await getTenant(ctx.db, id);
  const { row, access } = await loadAuthorized(ctx, permission, t, (x) => tenantScope(x)!, { what: "Tenant" });
  return { tenant: row, access };
}

/**
 * A memory of a tenant's durable memory (knowledgeBaseId null) or of one
 * knowledge base, that the caller may see; 404 otherwise (never revealing
 * another subject's, knowledge base's or tenant's memory).
 */
export async function memoryWithin(
  ctx: ServiceContext,
  access: Access,
  where: { tenantId: string; knowledgeBaseId: string | null },
  memoryId: string,
): Promise<Memory> {
  const m = await getMemory(ctx.db, memoryId);
  const visible = subjectFilter(access, {});
  if (!m || m.tenantId !== where.tenantId || m.knowledgeBaseId !== where.knowledgeBaseId || (visible !== null && m.subjectId !== visible)) {
    throw notFound("Memory");
  }
  return m;
}
