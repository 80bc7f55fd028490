import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { membershipOf, requireUser } from "../../auth/authorize";
import { SCOPES } from "../../contracts/scopes";
import { jsonBody, jsonContent, noContent, Timestamp } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { apiKeyFor, assertRoleMayGrant, createApiKey, listApiKeys, publicApiKey, revokeApiKey } from "../../services/api-keys";
import { createEnvironment, deleteEnvironment, environmentFor, listEnvironments, publicEnvironment, updateEnvironment } from "../../services/environments";
import { organizationFor } from "../../services/organizations";
import { routesTagged } from "../define-route";

const EnvironmentSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    is_default: z.boolean(),
    allowed_redirect_origins: z.array(z.string()).openapi({
      description: "https origins a connect flow may send the browser back to (besides the service's own origin, and localhost outside production)",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Environment");

/** The body of GET /environments/{id}, for tests and clients. */
export type EnvironmentResponse = z.infer<typeof EnvironmentSchema>;

const EnvironmentBody = z.object({ name: z.string().trim().min(1).max(255) });

const RedirectOrigin = z
  .string()
  .max(255)
  .refine((o) => {
    try {
      const u = new URL(o);
      return u.protocol === "https:" && u.origin === o;
    } catch {
      return false;
    }
  }, "Must be an https origin such as https://app.example.com (no path, no trailing slash)");

const UpdateEnvironmentBody = z
  .object({ name: z.string().trim().min(1).max(255).optional(), allowed_redirect_origins: z.array(RedirectOrigin).max(20).optional() })
  .refine((b) => b.name !== undefined || b.allowed_redirect_origins !== undefined, "Send name, allowed_redirect_origins or both");

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

const envRoute = routesTagged(["Environments"]);
const keyRoute = routesTagged(["API keys"]);

export const environmentRoutes = createRouter();

const listEnvs = envRoute("get", "/organizations/{id}/environments", "environments:read", {
  operationId: "listEnvironments", summary: "Environments of an organization",
  responses: { 200: jsonContent(z.object({ environments: z.array(EnvironmentSchema) }), "Environments") },
});
environmentRoutes.openapi(listEnvs, async (c) => {
  const { organization } = await organizationFor(ctxOf(c), c.req.valid("param").id, "environments:read");
  const rows = await listEnvironments(c.get("db"), organization.id);
  return c.json({ environments: rows.map(publicEnvironment) }, 200);
});

const createEnv = envRoute("post", "/organizations/{id}/environments", "environments:write", {
  operationId: "createEnvironment", summary: "Create an environment (owner, billing_admin, developer)",
  request: { body: jsonBody(EnvironmentBody) }, responses: { 201: jsonContent(EnvironmentSchema, "The environment") },
});
environmentRoutes.openapi(createEnv, async (c) => {
  const { organization } = await organizationFor(ctxOf(c), c.req.valid("param").id, "environments:write");
  const env = await createEnvironment(c.get("db"), organization.id, c.req.valid("json").name);
  return c.json(publicEnvironment(env), 201);
});

const getEnv = envRoute("get", "/environments/{id}", "environments:read", {
  operationId: "getEnvironment", summary: "One environment",
  responses: { 200: jsonContent(EnvironmentSchema, "The environment") },
});
environmentRoutes.openapi(getEnv, async (c) => {
  const env = await environmentFor(ctxOf(c), c.req.valid("param").id, "environments:read");
  return c.json(publicEnvironment(env), 200);
});

const patchEnv = envRoute("patch", "/environments/{id}", "environments:write", {
  operationId: "updateEnvironment",
  summary: "Rename an environment (owner, billing_admin, developer) or set its allowed redirect origins (owner, developer)",
  description: "`allowed_redirect_origins`: at most 20 https origins where connect flows may end (API-DECISIONS \"Wave 3\").",
  request: { body: jsonBody(UpdateEnvironmentBody) }, responses: { 200: jsonContent(EnvironmentSchema, "The environment") },
});
environmentRoutes.openapi(patchEnv, async (c) => {
  const body = c.req.valid("json");
  const id = c.req.valid("param").id;
  const env = await environmentFor(ctxOf(c), id, body.allowed_redirect_origins !== undefined ? "environments:redirects" : "environments:write");
  const updated = await updateEnvironment(c.get("db"), env.id, body);
  return c.json(publicEnvironment(updated), 200);
});

const deleteEnv = envRoute("delete", "/environments/{id}", "environments:delete", {
  operationId: "deleteEnvironment", summary: "Delete an environment (owner only); 409 while it still has tenants",
  responses: { 204: noContent },
});
environmentRoutes.openapi(deleteEnv, async (c) => {
  const env = await environmentFor(ctxOf(c), c.req.valid("param").id, "environments:delete");
  await deleteEnvironment(c.get("db"), env.id);
  return c.body(null, 204);
});

const createKey = keyRoute("post", "/environments/{id}/api-keys", "api_keys:manage", {
  operationId: "createApiKey", summary: "Create an API key (owner, billing_admin, developer)",
  description:
    "The key is limited to this environment, to `tenant_ids` (empty = all tenants of the environment) and, " +
    "optionally, to one knowledge base. The secret is returned once; only its hash is stored.",
  request: { body: jsonBody(CreateApiKeyBody) },
  responses: { 201: jsonContent(CreatedApiKeySchema, "The key, with its secret") },
});
environmentRoutes.openapi(createKey, async (c) => {
  const user = requireUser(ctxOf(c));
  const env = await environmentFor(ctxOf(c), c.req.valid("param").id, "api_keys:manage");
  assertRoleMayGrant((await membershipOf(ctxOf(c), user, env.organizationId))?.role ?? null, c.req.valid("json").scopes);
  const { key, record } = await createApiKey(c.get("db"), env, c.req.valid("json"), user.user.id);
  return c.json({ ...publicApiKey(record), key }, 201);
});

const listKeys = keyRoute("get", "/environments/{id}/api-keys", "api_keys:read", {
  operationId: "listApiKeys", summary: "Active API keys of an environment (without secrets)",
  responses: { 200: jsonContent(z.object({ api_keys: z.array(ApiKeySchema) }), "Keys") },
});
environmentRoutes.openapi(listKeys, async (c) => {
  const env = await environmentFor(ctxOf(c), c.req.valid("param").id, "api_keys:read");
  const keys = await listApiKeys(c.get("db"), env.id);
  return c.json({ api_keys: keys.map(publicApiKey) }, 200);
});

const deleteKey = keyRoute("delete", "/api-keys/{id}", "api_keys:manage", {
  operationId: "revokeApiKey", summary: "Revoke an API key; it stops working on the next request",
  responses: { 204: noContent },
});
environmentRoutes.openapi(deleteKey, async (c) => {
  const key = await apiKeyFor(ctxOf(c), c.req.valid("param").id, "api_keys:manage");
  await revokeApiKey(c.get("db"), key.id);
  return c.body(null, 204);
});
