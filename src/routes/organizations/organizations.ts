import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { requireUser } from "../../auth/authorize";
import { config } from "../../lib/config";
import { errorResponses, jsonBody, jsonContent, noContent, userOnly } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { runCleanup } from "../../services/cleanup";
import {
  createOrganization,
  deleteOrganization,
  listOrganizationsForUser,
  organizationFor,
  publicOrganization,
  updateOrganization,
} from "../../services/organizations";
import {
  CreatedOrganizationSchema,
  CreateOrganizationBody,
  OrganizationSchema,
  OrgIdParam,
  UpdateOrganizationBody,
} from "./schemas";

const tags = ["Organizations"];

export const organizationRoutes = createRouter();

const list = createRoute({
  method: "get",
  path: "/organizations",
  tags,
  operationId: "listOrganizations",
  ...routePermission("authenticated"),
  summary: "Organizations the signed-in user belongs to, each with the user's role",
  security: userOnly,
  responses: { 200: jsonContent(z.object({ organizations: z.array(OrganizationSchema) }), "Organizations"), ...errorResponses },
});
organizationRoutes.openapi(list, async (c) => {
  const user = requireUser(c);
  const rows = await listOrganizationsForUser(c.get("db"), user.user.id);
  return c.json({ organizations: rows.map((r) => publicOrganization(r.organization, r.role)) }, 200);
});

const get = createRoute({
  method: "get",
  path: "/organizations/{id}",
  tags,
  operationId: "getOrganization",
  ...routePermission("organization:read"),
  summary: "One organization",
  security: userOnly,
  request: { params: OrgIdParam },
  responses: { 200: jsonContent(OrganizationSchema, "The organization"), ...errorResponses },
});
organizationRoutes.openapi(get, async (c) => {
  const { organization, role } = await organizationFor(c, c.req.valid("param").id, "organization:read");
  return c.json(publicOrganization(organization, role ?? undefined), 200);
});

const create = createRoute({
  method: "post",
  path: "/organizations",
  tags,
  operationId: "createOrganization",
  ...routePermission("authenticated"),
  summary: "Create an organization",
  description:
    "Auto-provisions an environment `default`, a tenant `default` in it and the starting credits " +
    "(STARTING_CREDITS to the organization, STARTING_TENANT_CREDITS of them allocated to the default tenant). " +
    "The creator becomes `owner`.",
  security: userOnly,
  request: { body: jsonBody(CreateOrganizationBody) },
  responses: { 201: jsonContent(CreatedOrganizationSchema, "The new organization"), ...errorResponses },
});
organizationRoutes.openapi(create, async (c) => {
  const user = requireUser(c);
  const cfg = config(c.env);
  const { organization, environmentId, tenantId } = await createOrganization(c.get("db"), user.user, c.req.valid("json"), {
    starting: cfg.startingCredits,
    tenant: cfg.startingTenantCredits,
  });
  return c.json(
    { ...publicOrganization(organization, "owner"), default_environment_id: environmentId, default_tenant_id: tenantId },
    201,
  );
});

const update = createRoute({
  method: "patch",
  path: "/organizations/{id}",
  tags,
  operationId: "updateOrganization",
  ...routePermission("organization:update"),
  summary: "Rename an organization or change its status (owner, billing_admin)",
  description: "An `inactive` or `suspended` organization refuses writes and new chat or agent work until it is `active` again.",
  security: userOnly,
  request: { params: OrgIdParam, body: jsonBody(UpdateOrganizationBody) },
  responses: { 200: jsonContent(OrganizationSchema, "The updated organization"), ...errorResponses },
});
organizationRoutes.openapi(update, async (c) => {
  const { organization, role } = await organizationFor(c, c.req.valid("param").id, "organization:update");
  const org = await updateOrganization(c.get("db"), organization.id, c.req.valid("json"));
  return c.json(publicOrganization(org, role ?? undefined), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/organizations/{id}",
  tags,
  operationId: "deleteOrganization",
  ...routePermission("organization:delete"),
  summary: "Delete an organization and everything beneath it (owner only, irreversible)",
  security: userOnly,
  request: { params: OrgIdParam },
  responses: { 204: noContent, ...errorResponses },
});
organizationRoutes.openapi(remove, async (c) => {
  const { organization } = await organizationFor(c, c.req.valid("param").id, "organization:delete");
  const db = c.get("db");
  await runCleanup("organization", { db, env: c.env, waitUntil: (p) => c.executionCtx.waitUntil(p) }, organization.id);
  await deleteOrganization(db, organization.id);
  return c.body(null, 204);
});
