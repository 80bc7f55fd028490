import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { errorResponses, IdParam, jsonBody, jsonContent, noContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { catalogEntryFor, installTemplate, listCatalog, setFavorite, tenantAndTemplateFor } from "../../services/skills/catalog";
import { publicSkill } from "../../services/skills/skills";
import { tenantFor } from "../../services/tenants";
import { CatalogTemplateSchema, SkillSchema, TenantIdBody, TenantIdQuery } from "./schemas";

const tags = ["Skills"];

export const skillCatalogRoutes = createRouter();

const list = createRoute({
  method: "get",
  path: "/skills/catalog",
  tags,
  operationId: "listSkillCatalog",
  ...routePermission("skills:read"),
  summary: "Catalog templates with version, the tenant's favorite state and its installed copy",
  security: userOrKey,
  request: { query: TenantIdQuery },
  responses: { 200: jsonContent(z.object({ templates: z.array(CatalogTemplateSchema) }), "Templates"), ...errorResponses },
});
skillCatalogRoutes.openapi(list, async (c) => {
  const tenant = await tenantFor(c, c.req.valid("query").tenant_id, "skills:read", { addressedBy: "param" });
  return c.json({ templates: await listCatalog(c.get("db"), tenant.id) }, 200);
});

const favorite = createRoute({
  method: "post",
  path: "/skills/catalog/{id}/favorite",
  tags,
  operationId: "favoriteSkillTemplate",
  ...routePermission("skills:write"),
  summary: "Favorite a template for the tenant (idempotent)",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(TenantIdBody) },
  responses: { 200: jsonContent(CatalogTemplateSchema, "The template with is_favorite true"), ...errorResponses },
});
skillCatalogRoutes.openapi(favorite, async (c) => {
  const { tenant, template } = await tenantAndTemplateFor(c, c.req.valid("json").tenant_id, c.req.valid("param").id, "skills:write");
  await setFavorite(c.get("db"), tenant.id, template.id, true);
  return c.json(await catalogEntryFor(c.get("db"), tenant.id, template), 200);
});

const unfavorite = createRoute({
  method: "delete",
  path: "/skills/catalog/{id}/favorite",
  tags,
  operationId: "unfavoriteSkillTemplate",
  ...routePermission("skills:write"),
  summary: "Remove the tenant's favorite (idempotent)",
  security: userOrKey,
  request: { params: IdParam, query: TenantIdQuery },
  responses: { 204: noContent, ...errorResponses },
});
skillCatalogRoutes.openapi(unfavorite, async (c) => {
  const { tenant, template } = await tenantAndTemplateFor(c, c.req.valid("query").tenant_id, c.req.valid("param").id, "skills:write");
  await setFavorite(c.get("db"), tenant.id, template.id, false);
  return c.body(null, 204);
});

const install = createRoute({
  method: "post",
  path: "/skills/catalog/{id}/install",
  tags,
  operationId: "installSkillTemplate",
  ...routePermission("skills:write"),
  summary: "Create an editable tenant skill from the template",
  description:
    "201 with a new skill; 200 with the tenant's existing copy when the template is already installed " +
    "(an archived copy is reactivated, keeping its edits).",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(TenantIdBody) },
  responses: {
    200: jsonContent(SkillSchema, "The existing copy (reactivated if it was archived)"),
    201: jsonContent(SkillSchema, "A new copy"),
    ...errorResponses,
  },
});
skillCatalogRoutes.openapi(install, async (c) => {
  const { tenant, template } = await tenantAndTemplateFor(c, c.req.valid("json").tenant_id, c.req.valid("param").id, "skills:write");
  const { skill, created } = await installTemplate(c.get("db"), tenant, template);
  return c.json(publicSkill(skill), created ? 201 : 200);
});
