import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { jsonBody, jsonContent, noContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { catalogEntryFor, installTemplate, listCatalog, setFavorite, tenantAndTemplateFor } from "../../services/skills/catalog";
import { publicSkill } from "../../services/skills/skills";
import { tenantFor } from "../../services/tenants";
import { CatalogTemplateSchema, SkillSchema, TenantIdBody, TenantIdQuery } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Skills"]);

export const skillCatalogRoutes = createRouter();

const list = route("get", "/skills/catalog", "skills:read", {
  operationId: "listSkillCatalog",
  summary: "Catalog templates with version, the tenant's favorite state and its installed copy",
  request: { query: TenantIdQuery },
  responses: { 200: jsonContent(z.object({ templates: z.array(CatalogTemplateSchema) }), "Templates") },
});
skillCatalogRoutes.openapi(list, async (c) => {
  const tenant = await tenantFor(ctxOf(c), c.req.valid("query").tenant_id, "skills:read", { addressedBy: "param" });
  return c.json({ templates: await listCatalog(c.get("db"), tenant.id) }, 200);
});

const favorite = route("post", "/skills/catalog/{id}/favorite", "skills:write", {
  operationId: "favoriteSkillTemplate", summary: "Favorite a template for the tenant (idempotent)",
  request: { body: jsonBody(TenantIdBody) },
  responses: { 200: jsonContent(CatalogTemplateSchema, "The template with is_favorite true") },
});
skillCatalogRoutes.openapi(favorite, async (c) => {
  const { tenant, template } = await tenantAndTemplateFor(ctxOf(c), c.req.valid("json").tenant_id, c.req.valid("param").id, "skills:write");
  await setFavorite(c.get("db"), tenant.id, template.id, true);
  return c.json(await catalogEntryFor(c.get("db"), tenant.id, template), 200);
});

const unfavorite = route("delete", "/skills/catalog/{id}/favorite", "skills:write", {
  operationId: "unfavoriteSkillTemplate", summary: "Remove the tenant's favorite (idempotent)",
  request: { query: TenantIdQuery }, responses: { 204: noContent },
});
skillCatalogRoutes.openapi(unfavorite, async (c) => {
  const { tenant, template } = await tenantAndTemplateFor(ctxOf(c), c.req.valid("query").tenant_id, c.req.valid("param").id, "skills:write");
  await setFavorite(c.get("db"), tenant.id, template.id, false);
  return c.body(null, 204);
});

const install = route("post", "/skills/catalog/{id}/install", "skills:write", {
  operationId: "installSkillTemplate", summary: "Create an editable tenant skill from the template",
  description:
    "201 with a new skill; 200 with the tenant's existing copy when the template is already installed " +
    "(an archived copy is reactivated, keeping its edits).",
  request: { body: jsonBody(TenantIdBody) },
  responses: {
    200: jsonContent(SkillSchema, "The existing copy (reactivated if it was archived)"),
    201: jsonContent(SkillSchema, "A new copy"),
  },
});
skillCatalogRoutes.openapi(install, async (c) => {
  const { tenant, template } = await tenantAndTemplateFor(ctxOf(c), c.req.valid("json").tenant_id, c.req.valid("param").id, "skills:write");
  const { skill, created } = await installTemplate(c.get("db"), tenant, template);
  return c.json(publicSkill(skill), created ? 201 : 200);
});
