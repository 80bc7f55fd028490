import { createRoute, z } from "@hono/zod-openapi";
import { authorize, requireUser } from "../../auth/authorize";
import { config } from "../../lib/config";
import { notFound } from "../../lib/errors";
import { errorResponses, jsonBody, jsonContent, noContent, userOnly } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { runCleanup } from "../../services/cleanup";
import {
  createOrganization,
  deleteOrganization,
  getOrganization,
  listOrganizationsForUser,
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

const list = createRoute({
  method: "get",
  path: "/organizations",
  tags,
  operationId: "listOrganizations",
  summary: "Organizations the signed-in user belongs to, each with the user's role",
  security: userOnly,
  responses: { 200: jsonContent(z.object({ organizations: z.array(OrganizationSchema) }), "Organizations"), ...errorResponses },
});

const get = createRoute({
  method: "get",
  path: "/organizations/{id}",
  tags,
  operationId: "getOrganization",
  summary: "One organization",
  security: userOnly,
  request: { params: OrgIdParam },
  responses: { 200: jsonContent(OrganizationSchema, "The organization"), ...errorResponses },
});

const create = createRoute({
  method: "post",
  path: "/organizations",
  tags,
  operationId: "createOrganization",
  summary: "Create an organization",
  description:
    "Auto-provisions an environment `default`, a tenant `default` in it and the starting credits " +
    "(STARTING_CREDITS to the organization, STARTING_TENANT_CREDITS of them allocated to the default tenant). " +
    "The creator becomes `owner`.",
  security: userOnly,
  request: { body: jsonBody(CreateOrganizationBody) },
  responses: { 201: jsonContent(CreatedOrganizationSchema, "The new organization"), ...errorResponses },
});

const update = createRoute({
  method: "patch",
  path: "/organizations/{id}",
  tags,
  operationId: "updateOrganization",
  summary: "Rename an organization or change its status (owner, billing_admin)",
  description: "An `inactive` or `suspended` organization refuses writes and new chat or agent work until it is `active` again.",
  security: userOnly,
  request: { params: OrgIdParam, body: jsonBody(UpdateOrganizationBody) },
  responses: { 200: jsonContent(OrganizationSchema, "The updated organization"), ...errorResponses },
});

const remove = createRoute({
  method: "delete",
  path: "/organizations/{id}",
  tags,
  operationId: "deleteOrganization",
  summary: "Delete an organization and everything beneath it (owner only, irreversible)",
  security: userOnly,
  request: { params: OrgIdParam },
  responses: { 204: noContent, ...errorResponses },
});

export const organizationRoutes = createRouter()
  .openapi(list, async (c) => {
    const user = requireUser(c);
    const rows = await listOrganizationsForUser(c.get("db"), user.user.id);
    return c.json({ organizations: rows.map((r) => publicOrganization(r.organization, r.role)) }, 200);
  })
  .openapi(get, async (c) => {
    requireUser(c);
    const { id } = c.req.valid("param");
    const access = await authorize(c, "organization:read", { organizationId: id }, { what: "Organization" });
    const org = await getOrganization(c.get("db"), id);
    if (!org) throw notFound("Organization");
    return c.json(publicOrganization(org, access.role ?? undefined), 200);
  })
  .openapi(create, async (c) => {
    const user = requireUser(c);
    const body = c.req.valid("json");
    const cfg = config(c.env);
    const { organization, environmentId, tenantId } = await createOrganization(c.get("db"), user.user, body, {
      starting: cfg.startingCredits,
      tenant: cfg.startingTenantCredits,
    });
    return c.json(
      { ...publicOrganization(organization, "owner"), default_environment_id: environmentId, default_tenant_id: tenantId },
      201,
    );
  })
  .openapi(update, async (c) => {
    requireUser(c);
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const access = await authorize(c, "organization:update", { organizationId: id }, { what: "Organization" });
    const org = await updateOrganization(c.get("db"), id, body);
    return c.json(publicOrganization(org, access.role ?? undefined), 200);
  })
  .openapi(remove, async (c) => {
    requireUser(c);
    const { id } = c.req.valid("param");
    await authorize(c, "organization:delete", { organizationId: id }, { what: "Organization" });
    const db = c.get("db");
    await runCleanup("organization", { db, env: c.env, waitUntil: (p) => c.executionCtx.waitUntil(p) }, id);
    await deleteOrganization(db, id);
    return c.body(null, 204);
  });
