import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { jsonBody, jsonContent, noContent, pageBody, pageSchema, pagingQuery, Timestamp } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { deleteWithCleanup } from "../../services/cleanup";
import { createTenantFor, deleteTenant, listTenantsFor, publicTenant, tenantFor, updateTenant } from "../../services/tenants";
import { routesTagged } from "../define-route";

export const TenantSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    environment_id: z.string(),
    name: z.string(),
    external_id: z.string().nullable(),
    external_name: z.string().nullable(),
    credits_pool: z.number(),
    credits_used: z.number(),
    credits_available: z.number(),
    max_knowledge_bases: z.number().int(),
    max_documents: z.number().int(),
    max_storage_gb: z.number(),
    metadata: z.record(z.string(), z.unknown()),
    knowledge_base_count: z.number().int(),
    document_count: z.number().int(),
    storage_used_bytes: z.number().int(),
    is_default: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Tenant");

/** The body of GET /tenants/{id} (and of create and update), for tests and clients. */
export type TenantResponse = z.infer<typeof TenantSchema>;

const MAX_METADATA_BYTES = 16 * 1024;
const Metadata = z
  .record(z.string(), z.unknown())
  .refine((m) => JSON.stringify(m).length <= MAX_METADATA_BYTES, `metadata must serialize to at most ${MAX_METADATA_BYTES} bytes`);

const tenantFields = {
  name: z.string().trim().min(1).max(255),
  external_id: z.string().trim().min(1).max(255).nullable(),
  external_name: z.string().max(255).nullable(),
  credits_pool: z.number().min(0).max(1_000_000_000).openapi({ description: "Credits allocated from the organization" }),
  max_knowledge_bases: z.number().int().min(0).max(1_000_000),
  max_documents: z.number().int().min(0).max(1_000_000_000),
  max_storage_gb: z.number().min(0).max(1_000_000),
  metadata: Metadata,
};

const CreateTenantBody = z.object({
  environment_id: z.string().min(1).max(128),
  name: tenantFields.name,
  external_id: tenantFields.external_id.optional(),
  external_name: tenantFields.external_name.optional(),
  credits_pool: tenantFields.credits_pool.optional(),
  max_knowledge_bases: tenantFields.max_knowledge_bases.optional(),
  max_documents: tenantFields.max_documents.optional(),
  max_storage_gb: tenantFields.max_storage_gb.optional(),
  metadata: tenantFields.metadata.optional(),
});

/** The create body's fields, all optional, without the environment (a tenant never moves). */
const UpdateTenantBody = CreateTenantBody.omit({ environment_id: true }).partial();

const ListQuery = pagingQuery(500, 100).extend({
  env_id: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({ description: "Required for a user session; an API key defaults to (and must match) its environment" }),
});

const route = routesTagged(["Tenants"]);

export const tenantRoutes = createRouter();

const list = route("get", "/tenants", "tenants:read", {
  operationId: "listTenants", summary: "Tenants of an environment, with usage counts",
  description:
    "API keys see the tenants of their allowlist (all tenants of their environment when the allowlist is empty " +
    "or the key has `admin:full`).",
  request: { query: ListQuery },
  responses: { 200: jsonContent(pageSchema("tenants", TenantSchema), "Tenants") },
});
tenantRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  return c.json(pageBody("tenants", await listTenantsFor(ctxOf(c), q), q, publicTenant), 200);
});

const get = route("get", "/tenants/{id}", "tenants:read", {
  operationId: "getTenant", summary: "Tenant configuration, counts and storage used",
  responses: { 200: jsonContent(TenantSchema, "The tenant") },
});
tenantRoutes.openapi(get, async (c) => {
  const tenant = await tenantFor(ctxOf(c), c.req.valid("param").id, "tenants:read");
  return c.json(publicTenant(tenant), 200);
});

const create = route("post", "/tenants", "tenants:write", {
  operationId: "createTenant",
  summary: "Create a tenant (owner, billing_admin; keys need tenants:write and no tenant allowlist)",
  description:
    "`credits_pool` is allocated from the organization's available credits " +
    "(400 `insufficient_organization_credits` when it has fewer).",
  request: { body: jsonBody(CreateTenantBody) }, responses: { 201: jsonContent(TenantSchema, "The tenant") },
});
tenantRoutes.openapi(create, async (c) => {
  const tenant = await createTenantFor(ctxOf(c), c.req.valid("json"));
  return c.json(publicTenant(tenant), 201);
});

const update = route("patch", "/tenants/{id}", "tenants:write", {
  operationId: "updateTenant", summary: "Update a tenant (owner, billing_admin)",
  description:
    "Raising `credits_pool` takes credits from the organization's available credits; it cannot go below `credits_used`.",
  request: { body: jsonBody(UpdateTenantBody) }, responses: { 200: jsonContent(TenantSchema, "The tenant") },
});
tenantRoutes.openapi(update, async (c) => {
  const tenant = await tenantFor(ctxOf(c), c.req.valid("param").id, "tenants:write");
  const updated = await updateTenant(c.get("db"), tenant, c.req.valid("json"));
  return c.json(publicTenant(updated), 200);
});

const remove = route("delete", "/tenants/{id}", "tenants:delete", {
  operationId: "deleteTenant", summary: "Delete a tenant and everything it owns (irreversible)",
  description: "Its unused credits return to the organization; used credits stay counted as used.",
  responses: { 204: noContent },
});
tenantRoutes.openapi(remove, async (c) => {
  const tenant = await tenantFor(ctxOf(c), c.req.valid("param").id, "tenants:delete");
  await deleteWithCleanup(ctxOf(c), "tenant", tenant.id, (db) => deleteTenant(db, tenant));
  return c.body(null, 204);
});
