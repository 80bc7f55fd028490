import type { Env } from "../env";
import { config } from "../lib/config";
import { forbidden } from "../lib/errors";
import type { KeyCaller } from "../contracts/caller";

/**
 * OAuth access tokens of the knowledge-base MCP endpoint (README "Connecting Claude or any MCP
 * client by OAuth"). The OAuth provider (src/services/mcp-oauth/provider.ts) validates the token of
 * a request to /api/v1/mcp against OAUTH_KV, then hands that very Request object to the app; it is
 * recorded here, keyed by the object, so nothing a client sends can claim to be verified. The
 * authentication middleware turns the record into a caller (a key restricted to the grant).
 */

export const MCP_ENDPOINT_PATH = "/api/v1/mcp";

/** The one OAuth scope: search and ask the knowledge bases of the grant. */
export const MCP_OAUTH_SCOPE = "kb:read";

/** RFC 9728 metadata of the endpoint, on PUBLIC_BASE_URL (the one origin OAuth clients must use). */
export const mcpResourceMetadataUrl = (env: Env) =>
  `${config(env).publicBaseUrl}/.well-known/oauth-protected-resource${MCP_ENDPOINT_PATH}`;

/** The challenge of every 401 on the endpoint, so an MCP client can discover the authorization server. */
export const mcpChallenge = (env: Env) =>
  `Bearer realm="api", resource_metadata="${mcpResourceMetadataUrl(env)}", scope="${MCP_OAUTH_SCOPE}"`;

/** The MCP endpoint, with or without a trailing slash. */
export const isMcpEndpointPath = (pathname: string) => pathname === MCP_ENDPOINT_PATH || pathname === `${MCP_ENDPOINT_PATH}/`;

/** What the provider verified about a request's bearer token. */
export interface VerifiedOAuthToken {
  /** Our grant id (the props stored when the member approved; src/services/mcp-oauth/grants.ts). */
  grantId: string;
  userId: string;
  clientId: string;
  scope: readonly string[];
}

const verified = new WeakMap<Request, VerifiedOAuthToken>();

/** Only the provider's API handler calls this, after it validated the token of `request`. */
export function markOAuthVerified(request: Request, token: VerifiedOAuthToken): void {
  verified.set(request, token);
}

export function verifiedOAuthToken(request: Request): VerifiedOAuthToken | null {
  return verified.get(request) ?? null;
}

/** An OAuth token is for the MCP endpoint only (its audience): 403 anywhere else. */
export function assertOAuthRequestAllowed(path: string, caller: KeyCaller): void {
  if (caller.oauth && !isMcpEndpointPath(path)) {
    throw forbidden(`An OAuth access token of the MCP endpoint can only be used on ${MCP_ENDPOINT_PATH}`);
  }
}
