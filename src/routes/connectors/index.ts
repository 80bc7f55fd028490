import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { badRequest } from "../../lib/errors";
import { jsonBody, jsonContent, noContent, pageBody, pageSchema } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { connectorOwnerFor } from "../../services/connectors/owner";
import { AddBody, AddResponse, BySlugsBody, CallbackQuery, CatalogQuery, ConnectorSchema, OwnerQuery, SlugParam, StatusBody, StatusSchema } from "./schemas";
import { routesTagged } from "../define-route";
import { completeConnect, startConnect } from "../../services/connectors/connect";
import { allowedRedirectOriginsOf } from "../../services/environments";
import { getCookie } from "hono/cookie";
import { catalogBySlugs, catalogEntry, listCatalog } from "../../services/connectors/listing";
import { connectionStatuses, disconnect } from "../../services/connectors/status";

const route = routesTagged(["Connectors"]);

export const connectorRoutes = createRouter();

const catalog = route("get", "/connectors/catalog", "connectors:read", {
  operationId: "listConnectorCatalog", summary: "The apps that can be connected", request: { query: CatalogQuery },
  responses: { 200: jsonContent(pageSchema("connectors", ConnectorSchema), "Catalog page") },
});
connectorRoutes.openapi(catalog, (c) => {
  const q = c.req.valid("query");
  return c.json(pageBody("connectors", listCatalog(q), q, (d) => catalogEntry(c.env, d)), 200);
});

const bySlugs = route("post", "/connectors/catalog/by-slugs", "connectors:read", {
  operationId: "getConnectorsBySlugs", summary: "Catalog entries by slug (unknown slugs are left out)",
  request: { body: jsonBody(BySlugsBody) },
  responses: { 200: jsonContent(z.object({ connectors: z.array(ConnectorSchema) }), "Matching entries") },
});
connectorRoutes.openapi(bySlugs, (c) => c.json({ connectors: catalogBySlugs(c.env, c.req.valid("json").slugs) }, 200));

const status = route("post", "/connectors/status", "connectors:read", {
  operationId: "getConnectorStatus",
  summary: "Connection status of apps for the signed-in user, or (API key) a tenant's end user",
  request: { body: jsonBody(StatusBody) },
  responses: { 200: jsonContent(z.object({ statuses: z.array(StatusSchema) }), "One status per slug") },
});
connectorRoutes.openapi(status, async (c) => {
  const body = c.req.valid("json");
  const owner = await connectorOwnerFor(ctxOf(c), "connectors:read", body, "body");
  return c.json({ statuses: await connectionStatuses({ db: c.get("db"), env: c.env }, owner, body.slugs) }, 200);
});

const add = route("post", "/connectors/add", "connectors:write", {
  operationId: "addConnector", summary: "Start connecting an app: open the returned provider URL in the user's browser",
  description:
    "Open the returned `redirect_url` (on this service's origin) in the user's browser: it binds the flow to that browser " +
    "(cookie) and goes on to the provider, which sends the browser to GET /connectors/auth/callback; that stores the " +
    "connection (only in the same browser, otherwise `error=flow_not_started_here`) and then redirects to your " +
    "`redirect_url` with `status=connected|error&slug=` (and `error=` on failure). Your `redirect_url` must be on this " +
    "service's origin, on localhost outside production, or in the environment's `allowed_redirect_origins` (400 otherwise). " +
    "The authorization expires after 10 minutes.",
  request: { body: jsonBody(AddBody) },
  responses: { 200: jsonContent(AddResponse, "The provider's authorization URL") },
});
connectorRoutes.openapi(add, async (c) => {
  const body = c.req.valid("json");
  const owner = await connectorOwnerFor(ctxOf(c), "connectors:write", body, "body");
  const allowed = await allowedRedirectOriginsOf(c.get("db"), c.get("caller"));
  return c.json(await startConnect({ db: c.get("db"), env: c.env }, owner, body.slug, body.redirect_url, allowed), 200);
});

const remove = route("delete", "/connectors/{slug}", "connectors:delete", {
  operationId: "deleteConnector", summary: "Disconnect an app (revoked at the provider where it offers revocation)",
  request: { params: SlugParam, query: OwnerQuery }, responses: { 204: noContent },
});
connectorRoutes.openapi(remove, async (c) => {
  const owner = await connectorOwnerFor(ctxOf(c), "connectors:delete", c.req.valid("query"), "query");
  await disconnect({ db: c.get("db"), env: c.env }, owner, c.req.valid("param").slug);
  return c.body(null, 204);
});

const callback = route("get", "/connectors/auth/callback", "public", {
  operationId: "connectorOAuthCallback",
  summary: "OAuth callback of the providers (browsers only; validates the signed state)",
  request: { query: CallbackQuery },
  responses: { 302: { description: "To the final destination with status=connected|error" } }, security: [{}],
});
connectorRoutes.openapi(callback, async (c) => {
  const outcome = await completeConnect({ db: c.get("db"), env: c.env }, c.req.valid("query"), (name) => getCookie(c, name));
  // A state we did not sign, or one expired or already used, names no destination we may trust.
  if ("refused" in outcome) throw badRequest(`This authorization link is not valid (${outcome.refused}); start connecting again`);
  c.header("Cache-Control", "no-store");
  return c.redirect(outcome.location, 302);
});

