import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { requireUser } from "../../auth/authorize";
import { jsonBody, jsonContent, noContent, userOnly } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { deleteWithCleanup } from "../../services/cleanup";
import { createOrganizationFor, deleteOrganization, listOrganizationsForUser, organizationFor, publicOrganization, updateOrganization } from "../../services/organizations";
import { CreatedOrganizationSchema, CreateOrganizationBody, OrganizationSchema, UpdateOrganizationBody } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Organizations"]);

export const organizationRoutes = createRouter();

const list = route("get", "/organizations", "authenticated", {
  operationId: "listOrganizations", summary: "Organizations the signed-in user belongs to, each with the user's role",
  responses: { 200: jsonContent(z.object({ organizations: z.array(OrganizationSchema) }), "Organizations") },
  security: userOnly,
});
organizationRoutes.openapi(list, async (c) => {
  const user = requireUser(ctxOf(c));
  const rows = await listOrganizationsForUser(c.get("db"), user.user.id);
  return c.json({ organizations: rows.map((r) => publicOrganization(r.organization, r.role)) }, 200);
});

const get = route("get", "/organizations/{id}", "organization:read", {
  operationId: "getOrganization", summary: "One organization",
  responses: { 200: jsonContent(OrganizationSchema, "The organization") },
});
organizationRoutes.openapi(get, async (c) => {
  const { organization, role } = await organizationFor(ctxOf(c), c.req.valid("param").id, "organization:read");
  return c.json(publicOrganization(organization, role ?? undefined), 200);
});

const create = route("post", "/organizations", "authenticated", {
  operationId: "createOrganization", summary: "Create an organization",
  description:
    "Auto-provisions an environment `default`, a tenant `default` in it and the starting credits " +
    "(STARTING_CREDITS to the organization, STARTING_TENANT_CREDITS of them allocated to the default tenant). " +
    "The creator becomes `owner`.",
  request: { body: jsonBody(CreateOrganizationBody) },
  responses: { 201: jsonContent(CreatedOrganizationSchema, "The new organization") }, security: userOnly,
});
organizationRoutes.openapi(create, async (c) => c.json(await createOrganizationFor(ctxOf(c), requireUser(ctxOf(c)).user, c.req.valid("json")), 201));

const update = route("patch", "/organizations/{id}", "organization:update", {
  operationId: "updateOrganization", summary: "Rename an organization or change its status (owner, billing_admin)",
  description: "An `inactive` or `suspended` organization refuses writes and new chat or agent work until it is `active` again.",
  request: { body: jsonBody(UpdateOrganizationBody) },
  responses: { 200: jsonContent(OrganizationSchema, "The updated organization") },
});
organizationRoutes.openapi(update, async (c) => {
  const { organization, role } = await organizationFor(ctxOf(c), c.req.valid("param").id, "organization:update");
  const org = await updateOrganization(c.get("db"), organization.id, c.req.valid("json"));
  return c.json(publicOrganization(org, role ?? undefined), 200);
});

const remove = route("delete", "/organizations/{id}", "organization:delete", {
  operationId: "deleteOrganization",
  summary: "Delete an organization and everything beneath it (owner only, irreversible)", responses: { 204: noContent },
});
organizationRoutes.openapi(remove, async (c) => {
  const { organization } = await organizationFor(ctxOf(c), c.req.valid("param").id, "organization:delete");
  await deleteWithCleanup(ctxOf(c), "organization", organization.id, (db) => deleteOrganization(db, organization.id));
  return c.body(null, 204);
});
