import { Hono, type Context, type ExecutionContext as HonoExecutionContext } from "hono";
import { ctxOf } from "../context";
import { getCookie, setCookie } from "hono/cookie";
import { sha256Hex, randomToken } from "../../lib/crypto";
import { escapeHtml, PAGE_SECURITY_HEADERS } from "../../lib/html";
import { demoEnabled, ensureDemo } from "../../services/embed/demo";
import { mintEmbedToken, publicEmbedToken } from "../../services/embed/tokens";
import type { AppEnv } from "../../types";

/**
 * Outside /api/v1: GET /widget.js (the drop-in chat widget: browser code in src/widget/, bundled into the
 * static assets by `npm run build:assets`) and the development demo, GET /embed/demo with its token backend
 * POST /embed/demo/token.
 */

/** The built widget from the static assets, with its ETag (a hash of its text, kept while the file is the same). */
let built: { text: string; etag: string } | null = null;

async function widgetFile(c: Context<AppEnv>): Promise<{ text: string; etag: string } | null> {
  const res = await c.env.ASSETS.fetch(new Request(new URL("/widget.js", c.req.url)));
  if (!res.ok) return null;
  const text = await res.text();
  if (built?.text !== text) built = { text, etag: `"${(await sha256Hex(text)).slice(0, 32)}"` };
  return built;
}

async function widget(c: Context<AppEnv>) {
  const file = await widgetFile(c);
  // The assets folder has not been built (`npm run build:assets`; wrangler dev and deploy do it).
  if (!file) return c.text("The widget has not been built: run `npm run build:assets`.", 503);
  const headers: Record<string, string> = {
    "Content-Type": "text/javascript; charset=utf-8",
    // Cacheable by browsers and CDNs; revalidated with the ETag after ten minutes.
    "Cache-Control": "public, max-age=600, stale-while-revalidate=86400",
    ETag: file.etag,
    "X-Content-Type-Options": "nosniff",
    "Cross-Origin-Resource-Policy": "cross-origin",
  };
  const inm = c.req.header("If-None-Match");
  if (inm && inm.split(",").map((s) => s.trim()).includes(file.etag)) return new Response(null, { status: 304, headers });
  return new Response(c.req.method === "HEAD" ? null : file.text, { status: 200, headers });
}

const DEMO_COOKIE = "kb_embed_demo";

const DEMO_PAGE = (title: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font:16px/1.6 system-ui,sans-serif;max-width:720px;margin:40px auto;padding:0 20px;color:#1f2328}code,pre{background:#f6f8fa;border-radius:6px}code{padding:.1em .3em}pre{padding:12px;overflow:auto}</style>
</head><body>
<h1>Embedded chat: demo</h1>
<p>This page is an ordinary web page with the chat widget added by one script tag. Open the chat with the
button at the bottom right and ask, for example, <em>How many days do customers have to request a refund?</em>
or <em>What does express shipping cost?</em>. Answers stream in and cite the demo handbook; click a citation to
read its passage.</p>
<p>The page's "backend" is <code>POST /embed/demo/token</code>, which mints a short-lived embed token for a demo
knowledge base (made on first use, as the local user <code>embed-demo@example.com</code>). A real site mints
tokens on its own server with its API key; see the README, section "Embedding the chat in your site".
This demo exists only when <code>ENVIRONMENT</code> is <code>development</code> (or <code>test</code>).</p>
<pre>&lt;script src="/widget.js" data-token-url="/embed/demo/token" data-title="Acme help" defer&gt;&lt;/script&gt;</pre>
<script src="/widget.js" data-token-url="/embed/demo/token" data-title="Acme help" data-primary-color="#0f766e" defer></script>
</body></html>`;

async function demoPage(c: Context<AppEnv>) {
  if (!demoEnabled(c.env)) return c.notFound();
  return c.html(DEMO_PAGE("Embedded chat demo"), 200, {
    ...PAGE_SECURITY_HEADERS,
    "Content-Security-Policy":
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "Cache-Control": "no-store",
  });
}

/** The demo page's token backend: mints a token for the demo knowledge base, for this page's origin only. */
async function demoToken(c: Context<AppEnv>) {
  if (!demoEnabled(c.env)) return c.notFound();
  const own = new URL(c.req.url).origin;
  const origin = c.req.header("Origin");
  // Only the demo page itself (same origin) gets tokens: no other site can mint through it.
  if (origin !== undefined && origin !== own) return c.json({ error: { code: "forbidden", message: "Cross-origin request refused" } }, 403);
  const fetchApp = appFetch;
  if (!fetchApp) throw new Error("widgetRoutes: mounted without the app");
  const { userId, kb } = await ensureDemo(ctxOf(c), (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.cookie) headers.Cookie = opts.cookie;
    let body = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["Content-Type"] = "application/json";
    }
    return Promise.resolve(fetchApp(new Request(new URL(path, own), { method, headers, body }), c.env, c.executionCtx));
  });
  // Each browser is one end user of the demo (a random id in a cookie), so its chat survives reloads.
  let visitor = getCookie(c, DEMO_COOKIE);
  if (!visitor || !/^[A-Za-z0-9_-]{16,64}$/.test(visitor)) {
    visitor = randomToken(16);
    setCookie(c, DEMO_COOKIE, visitor, { path: "/embed/demo", httpOnly: true, sameSite: "Strict", maxAge: 30 * 86400 });
  }
  const { token, record } = await mintEmbedToken(
    c.get("db"),
    kb,
    { external_subject_id: `demo-visitor-${visitor}`, allowed_origins: [own], ttl_seconds: 600 },
    { userId },
  );
  return c.json(publicEmbedToken(token, record), 201, { "Cache-Control": "no-store" });
}

/** The app's own fetch, for the demo's provisioning requests (handed in by app.ts, which mounts these routes). */
type AppFetch = (request: Request, env: AppEnv["Bindings"], ctx: HonoExecutionContext) => Response | Promise<Response>;
let appFetch: AppFetch | null = null;

export function widgetRoutes(fetchApp: AppFetch) {
  appFetch = fetchApp;
  return new Hono<AppEnv>().get("/widget.js", widget).get("/embed/demo", demoPage).post("/embed/demo/token", demoToken);
}
