import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../types";
import { config } from "./config";

const ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
/**
 * Request headers a page may send: our own (X-D1-Bookmark: src/db/session.ts), the MCP and A2A protocol headers (their browser SDKs send
 * them on every call), the SSE resume header, and the headers the `openai` package adds to each
 * request (so it can call /openai from a page).
 */
const ALLOW_HEADERS = [
  "Authorization",
  "Content-Type",
  "X-Request-Id",
  "X-D1-Bookmark",
  "Last-Event-ID",
  "Mcp-Protocol-Version",
  "Mcp-Session-Id",
  "A2A-Version",
  "A2A-Extensions",
  "X-A2A-Extensions",
  ...["Arch", "Helper-Method", "Lang", "OS", "Package-Version", "Retry-Count", "Runtime", "Runtime-Version", "Timeout"].map((h) => `X-Stainless-${h}`),
].join(", ");
/** Response headers a page may read: the 401 challenge (MCP and A2A clients read it), the MCP session, ours. */
const EXPOSE_HEADERS = "WWW-Authenticate, Mcp-Session-Id, X-Request-Id, X-D1-Bookmark, Retry-After, Content-Type";

/**
 * CORS (API-DECISIONS.md, "Browsers"; wave 3 "Protocols at the edge of the
 * browser"): any origin may call the API with an API
 * key (no credentials: `Access-Control-Allow-Origin: *`); only ALLOWED_ORIGINS
 * get `Access-Control-Allow-Credentials`, so only they can make
 * cookie-authenticated calls.
 */
export const cors: MiddlewareHandler<AppEnv> = async (c, next) => {
  const origin = c.req.header("Origin");
  const allowed = origin ? config(c.env).allowedOrigins.includes(origin) : false;

  const apply = (h: Headers) => {
    if (!origin) return;
    if (allowed) {
      h.set("Access-Control-Allow-Origin", origin);
      h.set("Access-Control-Allow-Credentials", "true");
      h.append("Vary", "Origin");
    } else {
      h.set("Access-Control-Allow-Origin", "*");
    }
    h.set("Access-Control-Expose-Headers", EXPOSE_HEADERS);
  };

  if (c.req.method === "OPTIONS" && c.req.header("Access-Control-Request-Method")) {
    const h = new Headers();
    apply(h);
    h.set("Access-Control-Allow-Methods", ALLOW_METHODS);
    h.set("Access-Control-Allow-Headers", ALLOW_HEADERS);
    h.set("Access-Control-Max-Age", "86400");
    return new Response(null, { status: 204, headers: h });
  }

  await next();
  // Streaming responses keep their body; only headers are touched.
  try {
    apply(c.res.headers);
  } catch {
    // Immutable headers (a Response passed through from fetch): re-wrap.
    c.res = new Response(c.res.body, c.res);
    apply(c.res.headers);
  }
};
