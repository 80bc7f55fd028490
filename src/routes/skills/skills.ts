import { jsonBody, jsonContent, noContent, pageBody, pageSchema, pagingQuery } from "../../lib/openapi";
import { ctxOf } from "../context";
import { createRouter } from "../../lib/router";
import { archiveSkill, createSkill, listSkills, publicSkill, skillFor, updateSkill } from "../../services/skills/skills";
import { tenantFor } from "../../services/tenants";
import { CreateSkillBody, SkillSchema, TenantIdQuery, UpdateSkillBody } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Skills"]);

export const skillCrudRoutes = createRouter();

const list = route("get", "/skills", "skills:read", {
  operationId: "listSkills", summary: "Active skills of a tenant (authored or installed from the catalog)",
  request: { query: pagingQuery(500, 100).extend(TenantIdQuery.shape) },
  responses: { 200: jsonContent(pageSchema("skills", SkillSchema), "Skills") },
});
skillCrudRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  const tenant = await tenantFor(ctxOf(c), q.tenant_id, "skills:read", { addressedBy: "param" });
  return c.json(pageBody("skills", await listSkills(c.get("db"), tenant.id, q), q, publicSkill), 200);
});

const create = route("post", "/skills", "skills:write", {
  operationId: "createSkill", summary: "Create a skill (owner, billing_admin, developer; keys need skills:write)",
  request: { body: jsonBody(CreateSkillBody) }, responses: { 201: jsonContent(SkillSchema, "The skill") },
});
skillCrudRoutes.openapi(create, async (c) => {
  const body = c.req.valid("json");
  const tenant = await tenantFor(ctxOf(c), body.tenant_id, "skills:write", { addressedBy: "param" });
  const skill = await createSkill(c.get("db"), tenant, body);
  return c.json(publicSkill(skill), 201);
});

const get = route("get", "/skills/{id}", "skills:read", {
  operationId: "getSkill", summary: "One skill of the tenant (archived ones too, with their status)",
  request: { query: TenantIdQuery }, responses: { 200: jsonContent(SkillSchema, "The skill") },
});
skillCrudRoutes.openapi(get, async (c) => {
  const skill = await skillFor(ctxOf(c), c.req.valid("query").tenant_id, c.req.valid("param").id, "skills:read");
  return c.json(publicSkill(skill), 200);
});

const update = route("patch", "/skills/{id}", "skills:write", {
  operationId: "updateSkill",
  summary: "Change a skill's name, description or body; later agent runs use the new content",
  description: "An archived skill cannot be edited (409 `skill_archived`).",
  request: { query: TenantIdQuery, body: jsonBody(UpdateSkillBody) },
  responses: { 200: jsonContent(SkillSchema, "The skill") },
});
skillCrudRoutes.openapi(update, async (c) => {
  const skill = await skillFor(ctxOf(c), c.req.valid("query").tenant_id, c.req.valid("param").id, "skills:write");
  const updated = await updateSkill(c.get("db"), skill, c.req.valid("json"));
  return c.json(publicSkill(updated), 200);
});

const remove = route("delete", "/skills/{id}", "skills:write", {
  operationId: "archiveSkill",
  summary: "Archive a skill (it leaves the list; a catalog copy is reactivated by installing again)",
  request: { query: TenantIdQuery }, responses: { 204: noContent },
});
skillCrudRoutes.openapi(remove, async (c) => {
  const skill = await skillFor(ctxOf(c), c.req.valid("query").tenant_id, c.req.valid("param").id, "skills:write");
  await archiveSkill(c.get("db"), skill);
  return c.body(null, 204);
});
