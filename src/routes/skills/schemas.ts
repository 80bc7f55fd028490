import { z } from "@hono/zod-openapi";
import { SKILL_STATUSES } from "../../db/schema";
import { Timestamp } from "../../lib/openapi";
import { SKILL_LIMITS } from "../../services/skills/skills";

export const TenantIdQuery = z.object({
  tenant_id: z.string().min(1).max(128).openapi({ description: "The tenant that owns the skills (required)" }),
});

export const TenantIdBody = z.object({ tenant_id: z.string().min(1).max(128) });

export const SkillSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    name: z.string(),
    description: z.string().openapi({ description: "What an agent reads to decide whether an `auto` skill applies" }),
    body: z.string().openapi({ description: "Markdown instructions" }),
    status: z.enum(SKILL_STATUSES),
    template_id: z.string().nullable().openapi({ description: "The catalog template this skill was installed from" }),
    template_version: z.number().int().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Skill");

export const CatalogTemplateSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    body: z.string(),
    version: z.number().int(),
    category: z.string(),
    is_favorite: z.boolean(),
    installed_skill_id: z
      .string()
      .nullable()
      .openapi({ description: "The tenant's active copy of this template; null when none (or only an archived one)" }),
  })
  .openapi("SkillCatalogTemplate");

const fields = {
  name: z.string().trim().min(1).max(SKILL_LIMITS.name),
  description: z.string().trim().min(1).max(SKILL_LIMITS.description),
  body: z.string().min(1).max(SKILL_LIMITS.body).refine((s) => s.trim().length > 0, "Must not be blank"),
};

export const CreateSkillBody = TenantIdBody.extend(fields);

export const UpdateSkillBody = z
  .object(fields)
  .partial()
  .refine((b) => b.name !== undefined || b.description !== undefined || b.body !== undefined, {
    message: "Send at least one of name, description, body",
  });
