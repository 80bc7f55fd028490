import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { matchedRoutes } from "hono/route";
import { config } from "../lib/config";
import { ApiError, forbidden, unauthorized } from "../lib/errors";
import { resolveApiKey } from "../services/api-keys";
import { looksLikeEmbedToken, resolveEmbedToken } from "../services/embed/tokens";
import { resolveSession, SESSION_COOKIE, SESSION_TTL_MS } from "../services/identity/sessions";
import type { AppEnv } from "../types";
import { resolveOAuthCaller } from "../services/mcp-oauth/grants";
import { assertEmbedRequestAllowed } from "./embed";
import { assertOAuthRequestAllowed, verifiedOAuthToken } from "./oauth";
import { isPublicApiPath } from "./public-paths";

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Whether the request's path works without credentials (src/auth/public-paths.ts). */
export function isPublicPath(c: Context<AppEnv>): boolean {
  return isPublicApiPath(c.req.path);
}

export function setSessionCookie(c: Context<AppEnv>, token: string) {
  setCookie(c, SESSION_COOKIE, token, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: new URL(c.req.url).protocol === "https:",
    maxAge: Math.floor(SESSION_TTL_MS / 1000),
  });
}

export function clearSessionCookie(c: Context<AppEnv>) {
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure: new URL(c.req.url).protocol === "https:" });
}

/**
 * Resolves the caller from `Authorization: Bearer kbk_...` (or an embed token
 * `kbe_...`, src/auth/embed.ts, or an OAuth access token of the MCP endpoint,
 * src/auth/oauth.ts) or the session
 * cookie and stores it in `c.var.caller`. A bad bearer credential is always
 * 401; a stale cookie makes the request anonymous, and an anonymous request is
 * answered 401 here unless its path is public (src/auth/public-paths.ts), so
 * authenticated handlers always see a caller.
 */
// Every 401 carries `WWW-Authenticate: Bearer` (src/lib/error-handler.ts), which MCP and A2A clients read.
export const authenticate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const db = c.get("db");
  const authz = c.req.header("Authorization");
  if (authz !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (!m) throw new ApiError("unauthorized", "Authorization header must be 'Bearer <API key>'");
    const oauthToken = verifiedOAuthToken(c.req.raw);
    if (oauthToken) {
      // An OAuth access token the provider already validated (src/auth/oauth.ts): a key restricted to its grant.
      const caller = await resolveOAuthCaller(db, oauthToken);
      assertOAuthRequestAllowed(c.req.path, caller);
      c.set("caller", caller);
      return next();
    }
    if (looksLikeEmbedToken(m[1])) {
      // Embed tokens (kbe_...): only the widget's chat routes, only from the token's origins.
      const caller = await resolveEmbedToken(db, m[1]);
      assertEmbedRequestAllowed(c, caller);
      c.set("caller", caller);
      return next();
    }
    const { caller, touch } = await resolveApiKey(db, m[1]);
    if (touch) c.executionCtx.waitUntil(touch.catch((e) => console.error("last_used_at update failed", e)));
    c.set("caller", caller);
    return next();
  }

  const token = getCookie(c, SESSION_COOKIE);
  if (token) {
    const session = await resolveSession(db, token);
    if (session) {
      // Cookie-authenticated writes from a foreign page are refused (CSRF),
      // on top of SameSite=Lax and the CORS allowlist.
      if (UNSAFE.has(c.req.method)) assertTrustedOrigin(c);
      c.set("caller", { type: "user", user: session.user, sessionId: session.sessionId });
      if (session.refreshedExpiresAt) setSessionCookie(c, token);
      return next();
    }
    clearSessionCookie(c);
  }

  // Anonymous: 401 on every route that exists and is not public (an unknown path stays a 404).
  if (!isPublicPath(c) && matchedRoutes(c).some((r) => r.method !== "ALL")) throw unauthorized();
  c.set("caller", null as never);
  return next();
};

function assertTrustedOrigin(c: Context<AppEnv>) {
  const origin = c.req.header("Origin");
  if (!origin || origin === "null") {
    if (origin === "null") throw forbidden("Cross-origin request refused");
    return; // Non-browser clients (curl, servers) send no Origin.
  }
  const cfg = config(c.env);
  const trusted = new Set([new URL(c.req.url).origin, new URL(cfg.publicBaseUrl).origin, ...cfg.allowedOrigins]);
  if (!trusted.has(origin)) {
    throw forbidden("Cross-origin request with a session cookie refused; add the origin to ALLOWED_ORIGINS");
  }
}
