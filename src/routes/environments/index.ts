import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { requireUser } from "../../auth/authorize";
import { SCOPES } from "../../auth/scopes";
import { errorResponses, IdParam, jsonBody, jsonContent, noContent, Timestamp, userOnly } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { apiKeyFor, createApiKey, listApiKeys, publicApiKey, revokeApiKey } from "../../services/api-keys";
import {
  createEnvironment,
  deleteEnvironment,
  environmentFor,
  listEnvironments,
  publicEnvironment,
  renameEnvironment,
} from "../../services/environments";
import { organizationFor } from "../../services/organizations";

const EnvironmentSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    is_default: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Environment");

/** The body of GET /environments/{id}, for tests and clients. */
export type EnvironmentResponse = z.infer<typeof EnvironmentSchema>;

const EnvironmentBody = z.object({ name: z.string().trim().min(1).max(255) });

const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: "First characters of the key, to recognise it" }),
    organization_id: z.string(),
    environment_id: z.string(),
    scopes: z.array(z.string()),
    tenant_ids: z.array(z.string()).openapi({ description: "Empty = every tenant of the environment" }),
    knowledge_base_id: z.string().nullable(),
    expires_at: Timestamp.nullable(),
    last_used_at: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .openapi("ApiKey");

const CreatedApiKeySchema = ApiKeySchema.extend({
  key: z.string().openapi({ description: "The secret. Shown only in this response; store it now." }),
}).openapi("CreatedApiKey");

const CreateApiKeyBody = z.object({
  name: z.string().trim().min(1).max(255),
  scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length),
  tenant_ids: z.array(z.string().min(1).max(128)).max(1000).default([]),
  knowledge_base_id: z.string().min(1).max(128).nullish(),
  expires_at: z.iso.datetime({ offset: true }).nullish(),
});

const envTags = ["Environments"];
const keyTags = ["API keys"];

export const environmentRoutes = createRouter();

const listEnvs = createRoute({
  method: "get",
  path: "/organizations/{id}/environments",
  tags: envTags,
  operationId: "listEnvironments",
  ...routePermission("environments:read"),
  summary: "Environments of an organization",
  security: userOnly,
  request: { params: IdParam },
  responses: { 200: jsonContent(z.object({ environments: z.array(EnvironmentSchema) }), "Environments"), ...errorResponses },
});
environmentRoutes.openapi(listEnvs, async (c) => {
  const { organization } = await organizationFor(c, c.req.valid("param").id, "environments:read");
  const rows = await listEnvironments(c.get("db"), organization.id);
  return c.json({ environments: rows.map(publicEnvironment) }, 200);
});

const createEnv = createRoute({
  method: "post",
  path: "/organizations/{id}/environments",
  tags: envTags,
  operationId: "createEnvironment",
  ...routePermission("environments:write"),
  summary: "Create an environment (owner, billing_admin, developer)",
  security: userOnly,
  request: { params: IdParam, body: jsonBody(EnvironmentBody) },
  responses: { 201: jsonContent(EnvironmentSchema, "The environment"), ...errorResponses },
});
environmentRoutes.openapi(createEnv, async (c) => {
  const { organization } = await organizationFor(c, c.req.valid("param").id, "environments:write");
  const env = await createEnvironment(c.get("db"), organization.id, c.req.valid("json").name);
  return c.json(publicEnvironment(env), 201);
});

const getEnv = createRoute({
  method: "get",
  path: "/environments/{id}",
  tags: envTags,
  operationId: "getEnvironment",
  ...routePermission("environments:read"),
  summary: "One environment",
  security: userOnly,
  request: { params: IdParam },
  responses: { 200: jsonContent(EnvironmentSchema, "The environment"), ...errorResponses },
});
environmentRoutes.openapi(getEnv, async (c) => {
  const env = await environmentFor(c, c.req.valid("param").id, "environments:read");
  return c.json(publicEnvironment(env), 200);
});

const patchEnv = createRoute({
  method: "patch",
  path: "/environments/{id}",
  tags: envTags,
  operationId: "updateEnvironment",
  ...routePermission("environments:write"),
  summary: "Rename an environment (owner, billing_admin, developer)",
  security: userOnly,
  request: { params: IdParam, body: jsonBody(EnvironmentBody) },
  responses: { 200: jsonContent(EnvironmentSchema, "The environment"), ...errorResponses },
});
environmentRoutes.openapi(patchEnv, async (c) => {
  const env = await environmentFor(c, c.req.valid("param").id, "environments:write");
  const updated = await renameEnvironment(c.get("db"), env.id, c.req.valid("json").name);
  return c.json(publicEnvironment(updated), 200);
});

const deleteEnv = createRoute({
  method: "delete",
  path: "/environments/{id}",
  tags: envTags,
  operationId: "deleteEnvironment",
  ...routePermission("environments:delete"),
  summary: "Delete an environment (owner only); 409 while it still has tenants",
  security: userOnly,
  request: { params: IdParam },
  responses: { 204: noContent, ...errorResponses },
});
environmentRoutes.openapi(deleteEnv, async (c) => {
  const env = await environmentFor(c, c.req.valid("param").id, "environments:delete");
  await deleteEnvironment(c.get("db"), env.id);
  return c.body(null, 204);
});

const createKey = createRoute({
  method: "post",
  path: "/environments/{id}/api-keys",
  tags: keyTags,
  operationId: "createApiKey",
  ...routePermission("api_keys:manage"),
  summary: "Create an API key (owner, billing_admin, developer)",
  description:
    "The key is limited to this environment, to `tenant_ids` (empty = all tenants of the environment) and, " +
    "optionally, to one knowledge base. The secret is returned once; only its hash is stored.",
  security: userOnly,
  request: { params: IdParam, body: jsonBody(CreateApiKeyBody) },
  responses: { 201: jsonContent(CreatedApiKeySchema, "The key, with its secret"), ...errorResponses },
});
environmentRoutes.openapi(createKey, async (c) => {
  const user = requireUser(c);
  const env = await environmentFor(c, c.req.valid("param").id, "api_keys:manage");
  const { key, record } = await createApiKey(c.get("db"), env, c.req.valid("json"), user.user.id);
  return c.json({ ...publicApiKey(record), key }, 201);
});

const listKeys = createRoute({
  method: "get",
  path: "/environments/{id}/api-keys",
  tags: keyTags,
  operationId: "listApiKeys",
  ...routePermission("api_keys:read"),
  summary: "Active API keys of an environment (without secrets)",
  security: userOnly,
  request: { params: IdParam },
  responses: { 200: jsonContent(z.object({ api_keys: z.array(ApiKeySchema) }), "Keys"), ...errorResponses },
});
environmentRoutes.openapi(listKeys, async (c) => {
  const env = await environmentFor(c, c.req.valid("param").id, "api_keys:read");
  const keys = await listApiKeys(c.get("db"), env.id);
  return c.json({ api_keys: keys.map(publicApiKey) }, 200);
});

const deleteKey = createRoute({
  method: "delete",
  path: "/api-keys/{id}",
  tags: keyTags,
  operationId: "revokeApiKey",
  ...routePermission("api_keys:manage"),
  summary: "Revoke an API key; it stops working on the next request",
  security: userOnly,
  request: { params: IdParam },
  responses: { 204: noContent, ...errorResponses },
});
environmentRoutes.openapi(deleteKey, async (c) => {
  const key = await apiKeyFor(c, c.req.valid("param").id, "api_keys:manage");
  await revokeApiKey(c.get("db"), key.id);
  return c.body(null, 204);
});
