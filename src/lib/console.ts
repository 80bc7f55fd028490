import type { Context } from "hono";
import type { AppEnv } from "../types";
import type { Env } from "../env";
import { config, ingestConfig } from "./config";

/**
 * The web console: a single-page app built into the Worker's static assets under /console/
 * (src/console, `npm run build:assets`). It calls only the public API (/api/v1) with the session
 * cookie, so it needs no route of its own beyond its files.
 */

/**
 * Everything the console loads comes from this origin: no CDN, no network fonts, no inline script. It
 * connects to this origin, to PUBLIC_BASE_URL (the signed upload URLs are built on it) and, with direct R2
 * uploads configured, to the R2 endpoint the presigned PUT goes to.
 */
export function consoleCsp(env: Env): string {
  const r2 = ingestConfig(env).r2;
  const connect = ["'self'", new URL(config(env).publicBaseUrl).origin, ...(r2 ? [`https://${r2.accountId}.r2.cloudflarestorage.com`] : [])];
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `connect-src ${connect.join(" ")}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join("; ");
}

function withHeaders(res: Response, path: string, env: Env): Response {
  const out = new Response(res.body, res);
  // Built files carry a content hash in their name (/console/assets/index-<hash>.js): cached for good.
  const hashed = path.startsWith("/console/assets/");
  out.headers.set("Cache-Control", hashed ? "public, max-age=31536000, immutable" : "no-cache");
  if ((out.headers.get("Content-Type") ?? "").startsWith("text/html")) {
    out.headers.set("Content-Security-Policy", consoleCsp(env));
    out.headers.set("X-Frame-Options", "DENY");
  }
  out.headers.set("X-Content-Type-Options", "nosniff");
  return out;
}

/** GET /console/*: a built file, or index.html for a client-side route; a missing file stays 404. */
export async function consoleAsset(c: Context<AppEnv>) {
  const res = await c.env.ASSETS.fetch(new Request(new URL(c.req.path, c.req.url)));
  if (res.status === 404 && /\.[a-z0-9]+$/i.test(c.req.path)) return c.notFound();
  if (res.status !== 404) return res.status === 200 ? withHeaders(res, c.req.path, c.env) : res;
  const index = await c.env.ASSETS.fetch(new Request(new URL("/console/", c.req.url)));
  if (!index.ok) {
    // The assets folder has not been built (`npm run build:assets`; wrangler dev and deploy do it).
    return c.text("The console has not been built: run `npm run build:assets`.", 503);
  }
  return withHeaders(index, "/console/", c.env);
}

/** GET /: browsers go to the console; API clients keep the JSON index. */
export function wantsHtml(c: Context<AppEnv>): boolean {
  const accept = c.req.header("Accept") ?? "";
  return /\btext\/html\b/i.test(accept);
}
