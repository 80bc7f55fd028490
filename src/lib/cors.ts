import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../types";
import { config } from "./config";

const ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
const ALLOW_HEADERS = "Authorization, Content-Type, X-Request-Id, Last-Event-ID";
const EXPOSE_HEADERS = "X-Request-Id, Retry-After, Content-Type";

/**
 * CORS (API-DECISIONS.md, "Browsers"): any origin may call the API with an API
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
