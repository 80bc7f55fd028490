import type { MiddlewareHandler } from "hono";
import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { requestId } from "hono/request-id";
import { getPath } from "hono/utils/url";
import { authenticate } from "./auth/middleware";
import { CAPABILITIES } from "./capabilities";
import { rateLimit } from "./auth/rate-limit";
import { openDb } from "./db/client";
import { checkedConfig } from "./lib/config";
import { cors } from "./lib/cors";
import { ApiError } from "./lib/errors";
import { onError, onNotFound } from "./lib/error-handler";
import { createRouter } from "./lib/router";
import { consoleAsset, wantsHtml } from "./lib/console";
import { swaggerAsset, swaggerPage } from "./lib/swagger";
import { a2aRoutes } from "./routes/a2a";
import { agentRoutes } from "./routes/agents";
import { artifactRoutes } from "./routes/artifacts";
import { authRoutes } from "./routes/auth";
import { billingRoutes } from "./routes/billing";
import { chatRoutes } from "./routes/chats";
import { connectorRoutes } from "./routes/connectors";
import { oauthFlowRoutes } from "./routes/oauth-flows";
import { documentRoutes } from "./routes/documents";
import { environmentRoutes } from "./routes/environments";
import { evalRoutes } from "./routes/eval";
import { knowledgeBaseRoutes } from "./routes/knowledge-bases";
import { memoryRoutes } from "./routes/memory";
import { organizationRoutes } from "./routes/organizations";
import { pageRoutes } from "./routes/pages";
import { skillRoutes } from "./routes/skills";
import { sqlRoutes } from "./routes/knowledge-bases/sql";
import { tableRoutes } from "./routes/knowledge-bases/tables";
import { tenantRoutes } from "./routes/tenants";
import { mcpRoutes } from "./routes/mcp";
import { oauthConsentRoutes } from "./routes/mcp/oauth-consent";
import { openaiRoutes } from "./routes/openai";
import { signedUrlRoutes } from "./routes/uploads";
import type { AppEnv } from "./types";
import { embedRoutes } from "./routes/embed";
import { widgetRoutes } from "./routes/embed/widget";

export const API_PREFIX = "/api/v1";

/**
 * The largest JSON body the API reads: room for a chat's two 5 MB images as
 * base64 data URLs, and nothing a client could use to exhaust the isolate's
 * memory. Files travel through the signed upload URLs (MAX_UPLOAD_BYTES).
 */
export const MAX_API_BODY_BYTES = 16 * 1024 * 1024;

/** The versioned API: one router per group, all behind authentication. */
function createApi() {
  const api = createRouter();
  api.use(
    "*",
    bodyLimit({
      maxSize: MAX_API_BODY_BYTES,
      onError: () => {
        throw new ApiError("payload_too_large", `The request body is larger than ${MAX_API_BODY_BYTES} bytes`);
      },
    }),
  );
  api.use("*", authenticate);
  api.use("*", rateLimit);
  api.route("/", authRoutes);
  api.route("/", organizationRoutes);
  api.route("/", environmentRoutes);
  api.route("/", tenantRoutes);
  api.route("/", billingRoutes);
  api.route("/", knowledgeBaseRoutes);
  api.route("/", tableRoutes);
  api.route("/", sqlRoutes);
  // Skills mounts its catalog before /skills/{id}, so that "catalog" is never taken for a skill id.
  api.route("/", skillRoutes);
  api.route("/", artifactRoutes);
  api.route("/", documentRoutes);
  api.route("/", chatRoutes);
  api.route("/", connectorRoutes);
  api.route("/", oauthFlowRoutes);
  api.route("/", agentRoutes);
  api.route("/", a2aRoutes);
  // Retrieval evaluation (npm run eval:retrieval); answers 404 unless EVAL_ENDPOINTS=true outside production.
  api.route("/", evalRoutes);
  api.route("/", mcpRoutes);
  // OpenAI-compatible chat completions and models (API keys).
  api.route("/", openaiRoutes);
  api.route("/", memoryRoutes);
  api.route("/", embedRoutes);
  return api;
}

/** Every response carries X-Request-Id, also one passed through as it is (the chat Durable Object's SSE stream). */
const echoRequestId: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (c.res.headers.has("X-Request-Id")) return;
  try {
    c.res.headers.set("X-Request-Id", c.get("requestId"));
  } catch {
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set("X-Request-Id", c.get("requestId"));
  }
};

/** The OpenAPI document at /openapi.json (with its security schemes) and the explorer at /swagger. */
function documentApi(app: OpenAPIHono<AppEnv>) {
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key: `Authorization: Bearer kbk_...`",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "sessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "kb_session",
    description: "A signed-in user session (set by /auth/signup and /auth/login)",
  });
  app.doc31("/openapi.json", (c) => ({
    openapi: "3.1.0",
    info: {
      title: "Grounded knowledge-base chat API",
      version: "1.0.0",
      description:
        "Multi-tenant knowledge bases with cited answers. Errors are " +
        '`{"error": {"code", "message", "details"?, "request_id"}}`; every response carries `X-Request-Id`.',
    },
    servers: [{ url: new URL(c.req.url).origin }],
  }));
  app.get("/swagger", swaggerPage);
  app.get("/swagger/:file", swaggerAsset);
}

/**
 * The protocol endpoints (`/api/v1/mcp`, `/api/v1/agents/:id/a2a`) also answer with a trailing slash:
 * MCP and A2A clients configured with a base URL often add one. Every other path stays strict.
 */
const PROTOCOL_TRAILING_SLASH = /^\/api\/v1\/(mcp|agents\/[^/]+\/a2a)\/$/;

export function routingPath(request: Request): string {
  const path = getPath(request);
  return PROTOCOL_TRAILING_SLASH.test(path) ? path.slice(0, -1) : path;
}

export function createApp() {
  const app = new OpenAPIHono<AppEnv>({ getPath: routingPath });

  app.use("*", requestId({ headerName: "X-Request-Id" }));
  app.use("*", echoRequestId);
  app.use("*", cors);
  app.use("*", async (c, next) => {
    // Configuration is parsed once per isolate; a bad value refuses every request with a 503 naming it.
    checkedConfig(c.env);
    c.set("db", openDb(c.env));
    c.set("capabilities", CAPABILITIES);
    c.set("caller", null as never); // set by authenticate on /api/v1
    await next();
  });

  app.route(API_PREFIX, createApi());
  // HTML pages outside the API: published artifacts (/p/:slug), chat share pages and chat images.
  app.route("/", pageRoutes);
  // Signed upload/download URLs: outside /api/v1, no credentials (the signature is one).
  app.route("/", signedUrlRoutes);
  // The embeddable chat widget (GET /widget.js) and its development demo (GET /embed/demo).
  app.route("/", widgetRoutes((request, env, ctx) => app.fetch(request, env, ctx)));
  // The consent page of the MCP endpoint's OAuth server (/oauth/authorize); the provider serves the rest (src/index.ts).
  app.route("/", oauthConsentRoutes);

  documentApi(app);
  // The web console (src/console): its files and client-side routes, all from the static assets.
  app.get("/console", (c) => c.redirect("/console/", 308));
  app.get("/console/*", consoleAsset);
  app.get("/", (c) =>
    wantsHtml(c)
      ? c.redirect("/console/", 302)
      : c.json({ service: "kb-chat-service", api: API_PREFIX, openapi: "/openapi.json", explorer: "/swagger", console: "/console/" }),
  );
  app.get("/health", (c) => c.json({ ok: true }));

  app.notFound(onNotFound);
  app.onError(onError);
  return app;
}
