import {
  getOAuthApi,
  GrantType,
  OAuthError,
  OAuthProvider,
  type OAuthHelpers,
  type OAuthProviderOptions,
  type OAuthResourceAuth,
  type TokenExchangeCallbackOptions,
} from "@cloudflare/workers-oauth-provider";
import { isMcpEndpointPath, markOAuthVerified, MCP_ENDPOINT_PATH } from "../../auth/oauth";
import { openDb } from "../../db/client";
import type { Env } from "../../env";
import { config } from "../../lib/config";
import { GRANT_IDLE_SECONDS, MCP_OAUTH_SCOPE, renewGrant } from "./grants";

/**
 * The OAuth 2.1 authorization server of the knowledge-base MCP endpoint, and the endpoint as its
 * protected resource (@cloudflare/workers-oauth-provider; README "Connecting Claude or any MCP client
 * by OAuth"). The library serves RFC 9728 protected-resource metadata, RFC 8414 authorization-server
 * metadata, dynamic client registration, the token endpoint (PKCE S256, refresh, RFC 7009 revocation)
 * and validates access tokens on /api/v1/mcp; the consent page is ours (src/routes/mcp/oauth-consent.ts).
 *
 * Only what is the provider's reaches it (src/index.ts, `isForOAuthProvider`): its endpoints, and
 * /api/v1/mcp with a bearer token that is not one of ours. API keys, embed tokens, sessions and
 * anonymous requests go straight to the app, exactly as before; an OAuth token the provider accepted
 * goes on to the same app route, marked as verified (src/auth/oauth.ts).
 */

export const OAUTH_ENDPOINTS = { authorize: "/oauth/authorize", token: "/oauth/token", register: "/oauth/register" } as const;
export const ACCESS_TOKEN_SECONDS = 3600;
/** Our props on each grant: only our grant id; everything else is read from D1 on each request. */
export interface McpOAuthProps {
  grant_id: string;
}

type Handler = { fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response> };

/** The resource (the audience of every token): the endpoint on PUBLIC_BASE_URL, the one origin clients must use. */
export const mcpResource = (env: Env) => `${config(env).publicBaseUrl}${MCP_ENDPOINT_PATH}`;

/** Bearer tokens the app resolves itself: API keys and embed tokens. */
const OWN_TOKEN_PREFIXES = ["kbk_", "kbe_"];

/** Whether a request is the provider's to answer (everything else goes to the app). */
export function isForOAuthProvider(request: Request): boolean {
  const path = new URL(request.url).pathname;
  if (path.startsWith("/.well-known/oauth-")) return true;
  if (path === OAUTH_ENDPOINTS.token || path === OAUTH_ENDPOINTS.register) return true;
  if (!isMcpEndpointPath(path) || request.method === "OPTIONS") return false;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("Authorization") ?? "")?.[1];
  return !!bearer && !OWN_TOKEN_PREFIXES.some((p) => bearer.startsWith(p));
}

/** At the code exchange and every refresh: the grant must still be ours and its member still a member. */
async function checkGrant(o: TokenExchangeCallbackOptions<Env>): Promise<void> {
  if (o.grantType !== GrantType.AUTHORIZATION_CODE && o.grantType !== GrantType.REFRESH_TOKEN) return;
  const props = o.props as McpOAuthProps | undefined;
  const alive = await renewGrant(openDb(o.env), { grantId: props?.grant_id ?? "", userId: o.userId, providerGrantId: o.grantId });
  if (!alive) {
    throw new OAuthError("invalid_grant", { description: "This authorization was revoked, or its member no longer belongs to the organization" });
  }
}

/** Token errors on /api/v1/mcp in the service's error shape; the challenge header (resource_metadata) is kept. */
function renderResourceError(e: { code: string; description: string; status: number; headers: Record<string, string>; internal: { category: string } }) {
  // Token-endpoint and registration errors stay RFC 6749 / 7591 bodies: OAuth clients parse them.
  if (e.internal.category !== "protected-resource") return undefined;
  const requestId = crypto.randomUUID();
  const code = e.status === 403 ? "forbidden" : e.status === 401 ? "unauthorized" : "invalid_request";
  return Response.json(
    { error: { code, message: e.description, request_id: requestId } },
    { status: e.status, headers: { ...e.headers, "X-Request-Id": requestId } },
  );
}

/** The app behind the provider: a verified token's request is marked, then served by the same route as keys. */
function apiHandler(app: Handler): Handler {
  return {
    fetch(request, env, ctx) {
      const { props, auth } = ctx as ExecutionContext & { props: McpOAuthProps; auth: OAuthResourceAuth };
      markOAuthVerified(request, { grantId: props.grant_id, userId: auth.userId ?? "", clientId: auth.clientId ?? "", scope: auth.scope });
      return app.fetch(request, env, ctx);
    },
  };
}

const NOT_ROUTED: Handler = { fetch: () => new Response(null, { status: 404 }) };

function options(env: Env, app: Handler): OAuthProviderOptions<Env> {
  return {
    apiRoute: MCP_ENDPOINT_PATH,
    apiHandler: apiHandler(app),
    defaultHandler: app,
    authorizeEndpoint: OAUTH_ENDPOINTS.authorize,
    tokenEndpoint: OAUTH_ENDPOINTS.token,
    clientRegistrationEndpoint: OAUTH_ENDPOINTS.register,
    accessTokenTTL: ACCESS_TOKEN_SECONDS,
    // A grant lives while the client keeps refreshing: 30 days after the code exchange, then after each refresh.
    refreshTokenTTL: GRANT_IDLE_SECONDS,
    refreshTokenIdleTTL: GRANT_IDLE_SECONDS,
    scopesSupported: [MCP_OAUTH_SCOPE],
    resourceMetadata: { resource: mcpResource(env), resource_name: "Knowledge bases", bearer_methods_supported: ["header"] },
    requiredScopes: [MCP_OAUTH_SCOPE],
    tokenExchangeCallback: checkGrant,
    onError: renderResourceError,
  };
}

// Built once per isolate (and per PUBLIC_BASE_URL, which fixes the resource).
let built: { base: string; provider: OAuthProvider<Env> } | undefined;

export function oauthProvider(env: Env, app: Handler): OAuthProvider<Env> {
  const base = config(env).publicBaseUrl;
  if (built?.base !== base) built = { base, provider: new OAuthProvider<Env>(options(env, app)) };
  return built.provider;
}

/** The provider's helpers (consent, grants, purge) for code outside its fetch: the consent page, revocation, cron. */
export function oauthHelpers(env: Env): OAuthHelpers {
  return getOAuthApi<Env>(options(env, NOT_ROUTED), env);
}
