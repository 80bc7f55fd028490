import type { Context } from "hono";
import type { AppEnv } from "../types";

/**
 * The interactive explorer at /swagger, with swagger-ui-dist's files copied into
 * the Worker's static assets under /swagger/ (src/console/scripts/copy-swagger.mjs; no CDN,
 * so it works offline).
 */
const FILES: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Knowledge-base chat API — explorer</title>
  <link rel="stylesheet" href="/swagger/swagger-ui.css">
  <link rel="icon" type="image/png" href="/swagger/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/swagger/swagger-ui-bundle.js"></script>
  <script src="/swagger/init.js"></script>
</body>
</html>`;

const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  withCredentials: true,
  persistAuthorization: true
});`;

const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'";

export function swaggerPage(c: Context<AppEnv>) {
  return c.html(PAGE, 200, { "Content-Security-Policy": CSP });
}

export async function swaggerAsset(c: Context<AppEnv>) {
  const file = c.req.param("file") ?? "";
  if (file === "init.js") {
    return c.body(INIT, 200, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=300" });
  }
  const type = FILES[file];
  if (!type) return c.notFound();
  const res = await c.env.ASSETS.fetch(new Request(new URL(`/swagger/${file}`, c.req.url)));
  if (!res.ok) return c.notFound();
  return new Response(res.body, {
    status: 200,
    headers: { "Content-Type": type, "Cache-Control": "public, max-age=86400" },
  });
}
