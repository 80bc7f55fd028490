import { and, asc, eq, inArray } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import type { Permission } from "../../auth/permissions";
import { inTenant } from "../../auth/resources";
import type { Database } from "../../db/client";
import { skills, type Skill, type Tenant } from "../../db/schema";
import { ApiError, badRequest, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { tenantFor } from "../tenants";
import { pageOf } from "../../db/page";

/** Limits (specification, "Limits"); the body limit is ours. */
export const SKILL_LIMITS = { name: 255, description: 280, body: 100_000 } as const;

export function publicSkill(s: Skill) {
  return {
    id: s.id,
    tenant_id: s.tenantId,
    name: s.name,
    description: s.description,
    body: s.body,
    status: s.status,
    template_id: s.templateId,
    template_version: s.templateVersion,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

export const skillArchived = () =>
  new ApiError("skill_archived", "The skill is archived; install its catalog template again to reactivate a template copy");

/** A skill of this tenant (any status), or undefined: another tenant's skill is never found. */
export async function getTenantSkill(db: Database, tenantId: string, id: string): Promise<Skill | undefined> {
  return db.select().from(skills).where(and(eq(skills.tenantId, tenantId), eq(skills.id, id))).get();
}

/** The tenant's active skills, oldest first. */
/**
 * Skills are addressed by tenant: the tenant named in `tenant_id` is authorized
 * first (403 when an API key may not use it), then the skill is looked up
 * within that tenant only (404 when it belongs to another).
 */
export async function skillFor(ctx: ServiceContext, tenantId: string, id: string, permission: Permission): Promise<Skill> {
  const tenant = await tenantFor(ctx, tenantId, permission, { addressedBy: "param" });
  const skill = await getTenantSkill(ctx.db, tenant.id, id);
  if (!skill) throw notFound("Skill");
  return skill;
}

export async function listSkills(db: Database, tenantId: string, page: { limit: number; offset: number }) {
  const where = and(eq(skills.tenantId, tenantId), eq(skills.status, "active"));
  return pageOf(db, skills, where, [asc(skills.createdAt), asc(skills.id)], page);
}

export interface SkillInput {
  name: string;
  description: string;
  body: string;
}

export async function createSkill(
  db: Database,
  tenant: Pick<Tenant, "id" | "organizationId" | "environmentId">,
  input: SkillInput & { templateId?: string; templateVersion?: number },
): Promise<Skill> {
  const now = nowIso();
  const skill: Skill = {
    id: newId("skl"),
    ...inTenant(tenant),
    name: input.name,
    description: input.description,
    body: input.body,
    status: "active",
    templateId: input.templateId ?? null,
    templateVersion: input.templateVersion ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(skills).values(skill);
  return skill;
}

/**
 * Archived skills are read-only (409 `skill_archived`): an archived skill is
 * deleted as far as agents are concerned, and silently editing it would
 * resurrect nothing. The status check is part of the UPDATE, so an archive
 * racing an edit cannot lose either.
 */
export async function updateSkill(db: Database, skill: Skill, input: Partial<SkillInput>): Promise<Skill> {
  const set: Partial<Skill> = { updatedAt: nowIso() };
  if (input.name !== undefined) set.name = input.name;
  if (input.description !== undefined) set.description = input.description;
  if (input.body !== undefined) set.body = input.body;
  const row = await db
    .update(skills)
    .set(set)
    .where(and(eq(skills.id, skill.id), eq(skills.tenantId, skill.tenantId), eq(skills.status, "active")))
    .returning()
    .get();
  if (!row) throw skillArchived();
  return row;
}

/** DELETE archives; archiving an archived skill changes nothing. */
export async function archiveSkill(db: Database, skill: Skill): Promise<void> {
  await db
    .update(skills)
    .set({ status: "archived", updatedAt: nowIso() })
    .where(and(eq(skills.id, skill.id), eq(skills.tenantId, skill.tenantId), eq(skills.status, "active")));
}

/**
 * For agent runs (later): the current content of the named skills of one
 * tenant, in the order given. Agents resolve skills at every run, so this is
 * read at run start. Missing, archived or foreign ids are refused with 400
 * naming each one, so a misconfigured agent fails loudly instead of running
 * without its instructions.
 */
export async function getSkillsForRun(db: Database, tenantId: string, ids: string[]): Promise<Skill[]> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return [];
  const rows = await db
    .select()
    .from(skills)
    .where(and(eq(skills.tenantId, tenantId), eq(skills.status, "active"), inArray(skills.id, wanted)))
    .all();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const missing = wanted.filter((id) => !byId.has(id));
  if (missing.length) {
    throw badRequest(
      `Unknown or archived skill(s) for this tenant: ${missing.join(", ")}`,
      missing.map((id) => ({ path: "body.skill_ids", message: `${id}: not an active skill of this tenant` })),
    );
  }
  return wanted.map((id) => byId.get(id)!);
}
