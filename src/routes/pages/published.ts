import { Hono, type Context } from "hono";
import { ctxOf } from "../context";
import { getCookie } from "hono/cookie";
import { membershipOf } from "../../auth/authorize";
import { setSessionCookie } from "../../auth/middleware";
import type { Artifact } from "../../db/schema";
import { PAGE_SECURITY_HEADERS } from "../../lib/html";
import { findPublishedArtifact } from "../../services/artifacts/artifacts";
import { cachedMarkdownPage, HTML_RAW_CSP, HTML_WRAPPER_CSP, htmlWrapperPage, MARKDOWN_PAGE_CSP, notFoundPage } from "../../services/artifacts/pages";
import { resolveSession, SESSION_COOKIE } from "../../services/identity/sessions";
import type { AppEnv } from "../../types";

type Ctx = Context<AppEnv>;

/**
 * Published artifacts, served by the root app (not under /api/v1). Public pages
 * are open; private pages need the session cookie of a member of the
 * artifact's organization. Everyone else, like a missing or unpublished page,
 * gets the same 404 page, so a page's existence is never revealed.
 */
async function canView(c: Ctx, a: Artifact): Promise<boolean> {
  if (a.publishedVisibility === "public") return true;
  const token = getCookie(c, SESSION_COOKIE);
  if (!token) return false;
  const session = await resolveSession(c.get("db"), token);
  if (!session) return false;
  if (session.refreshedExpiresAt) setSessionCookie(c, token);
  const caller = { type: "user" as const, user: session.user, sessionId: session.sessionId };
  return (await membershipOf(ctxOf(c), caller, a.organizationId)) !== null;
}

function page(c: Ctx, html: string, status: 200 | 404, csp: string, a?: Artifact, extra: Record<string, string> = {}) {
  const isPublic = a?.publishedVisibility === "public";
  return c.html(html, status, {
    ...PAGE_SECURITY_HEADERS,
    "Content-Security-Policy": csp,
    // Unpublishing must take effect at once, and private pages must never sit in shared caches.
    "Cache-Control": isPublic ? "public, no-cache" : "private, no-store",
    ...(isPublic ? {} : { "X-Robots-Tag": "noindex, nofollow" }),
    ...(isPublic ? {} : { Vary: "Cookie" }),
    ...extra,
  });
}

const notFound = (c: Ctx) => page(c, notFoundPage(), 404, MARKDOWN_PAGE_CSP);

async function viewable(c: Ctx): Promise<Artifact | null> {
  const slug = c.req.param("slug") ?? "";
  if (!/^[a-z0-9-]{1,80}$/.test(slug)) return null;
  const a = await findPublishedArtifact(c.get("db"), slug);
  return a && (await canView(c, a)) ? a : null;
}

export const publishedPageRoutes = new Hono<AppEnv>()
  .get("/p/:slug", async (c) => {
    const a = await viewable(c);
    if (!a) return notFound(c);
    const noindex = a.publishedVisibility !== "public";
    if (a.type === "html") {
      return page(c, htmlWrapperPage(a, { noindex }), 200, HTML_WRAPPER_CSP, a, { "X-Frame-Options": "DENY" });
    }
    const html = await cachedMarkdownPage(a, { noindex }, {
      cacheOrigin: new URL(c.req.url).origin,
      waitUntil: (p) => c.executionCtx.waitUntil(p),
    });
    return page(c, html, 200, MARKDOWN_PAGE_CSP, a, { "X-Frame-Options": "DENY" });
  })
  .get("/p/:slug/raw", async (c) => {
    const a = await viewable(c);
    // Only HTML artifacts have a raw frame; a Markdown page's content is never served unsanitized.
    if (!a || a.type !== "html") return notFound(c);
    return page(c, a.content, 200, HTML_RAW_CSP, a, {
      "X-Frame-Options": "SAMEORIGIN",
      "Cross-Origin-Resource-Policy": "same-origin",
    });
  });
