import { and, asc, eq } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import type { Permission } from "../../auth/permissions";
import { notFound } from "../../lib/errors";
import { tenantFor } from "../tenants";
import type { Database } from "../../db/client";
import { isUniqueViolation } from "../../db/errors";
import { skills, skillTemplateFavorites, skillTemplates, type Skill, type SkillTemplate, type Tenant } from "../../db/schema";
import { nowIso } from "../../lib/time";
import { createSkill } from "./skills";

export interface CatalogEntry {
  id: string;
  name: string;
  description: string;
  body: string;
  version: number;
  category: string;
  is_favorite: boolean;
  /** The tenant's ACTIVE copy of the template; an archived copy shows as null (installing reactivates it). */
  installed_skill_id: string | null;
}

export function catalogEntry(t: SkillTemplate, state: { isFavorite: boolean; installedSkillId: string | null }): CatalogEntry {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    body: t.body,
    version: t.version,
    category: t.category,
    is_favorite: state.isFavorite,
    installed_skill_id: state.installedSkillId,
  };
}

/** An active (not retired) catalog template. */
export async function getActiveTemplate(db: Database, id: string): Promise<SkillTemplate | undefined> {
  return db
    .select()
    .from(skillTemplates)
    .where(and(eq(skillTemplates.id, id), eq(skillTemplates.status, "active")))
    .get();
}

/** Active templates with this tenant's favorite and installed state, in catalog order. One query. */
/** The tenant named in `tenant_id`, authorized for `permission`, and an active catalog template (404 otherwise). */
export async function tenantAndTemplateFor(ctx: ServiceContext, tenantId: string, templateId: string, permission: Permission) {
  const tenant = await tenantFor(ctx, tenantId, permission, { addressedBy: "param" });
  const template = await getActiveTemplate(ctx.db, templateId);
  if (!template) throw notFound("Catalog template");
  return { tenant, template };
}

export async function listCatalog(db: Database, tenantId: string): Promise<CatalogEntry[]> {
  const rows = await db
    .select({
      template: skillTemplates,
      favorite: skillTemplateFavorites.templateId,
      installed: skills.id,
    })
    .from(skillTemplates)
    .leftJoin(
      skillTemplateFavorites,
      and(eq(skillTemplateFavorites.templateId, skillTemplates.id), eq(skillTemplateFavorites.tenantId, tenantId)),
    )
    .leftJoin(skills, and(eq(skills.templateId, skillTemplates.id), eq(skills.tenantId, tenantId), eq(skills.status, "active")))
    .where(eq(skillTemplates.status, "active"))
    .orderBy(asc(skillTemplates.sortOrder), asc(skillTemplates.id))
    .all();
  return rows.map((r) => catalogEntry(r.template, { isFavorite: r.favorite !== null, installedSkillId: r.installed }));
}

export async function catalogEntryFor(db: Database, tenantId: string, template: SkillTemplate): Promise<CatalogEntry> {
  const [fav, installed] = await Promise.all([
    db
      .select({ id: skillTemplateFavorites.templateId })
      .from(skillTemplateFavorites)
      .where(and(eq(skillTemplateFavorites.tenantId, tenantId), eq(skillTemplateFavorites.templateId, template.id)))
      .get(),
    db
      .select({ id: skills.id })
      .from(skills)
      .where(and(eq(skills.tenantId, tenantId), eq(skills.templateId, template.id), eq(skills.status, "active")))
      .get(),
  ]);
  return catalogEntry(template, { isFavorite: !!fav, installedSkillId: installed?.id ?? null });
}

/** Idempotent: favoriting twice or removing a missing favorite changes nothing. */
export async function setFavorite(db: Database, tenantId: string, templateId: string, favorite: boolean): Promise<void> {
  if (favorite) {
    await db.insert(skillTemplateFavorites).values({ tenantId, templateId, createdAt: nowIso() }).onConflictDoNothing();
  } else {
    await db
      .delete(skillTemplateFavorites)
      .where(and(eq(skillTemplateFavorites.tenantId, tenantId), eq(skillTemplateFavorites.templateId, templateId)));
  }
}

async function findCopy(db: Database, tenantId: string, templateId: string): Promise<Skill | undefined> {
  return db.select().from(skills).where(and(eq(skills.tenantId, tenantId), eq(skills.templateId, templateId))).get();
}

/**
 * Installs a template as an editable tenant skill. At most one copy exists per
 * tenant and template (a unique index), so a second install returns the copy,
 * reactivating it if it was archived; the copy keeps its edits and the template
 * version it was made from. Concurrent installs: one insert wins, the others
 * hit the index and return the winner's copy.
 */
export async function installTemplate(
  db: Database,
  tenant: Pick<Tenant, "id" | "organizationId" | "environmentId">,
  template: SkillTemplate,
): Promise<{ skill: Skill; created: boolean }> {
  let existing = await findCopy(db, tenant.id, template.id);
  if (!existing) {
    try {
      const skill = await createSkill(db, tenant, {
        name: template.name,
        description: template.description,
        body: template.body,
        templateId: template.id,
        templateVersion: template.version,
      });
      return { skill, created: true };
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      existing = await findCopy(db, tenant.id, template.id);
      if (!existing) throw e;
    }
  }
  if (existing.status === "active") return { skill: existing, created: false };
  const reactivated = await db
    .update(skills)
    .set({ status: "active", updatedAt: nowIso() })
    .where(and(eq(skills.id, existing.id), eq(skills.tenantId, tenant.id)))
    .returning()
    .get();
  return { skill: reactivated ?? existing, created: false };
}

