import type { Artifact } from "../../db/schema";
import { escapeHtml, htmlDocument } from "../../lib/html";
import { renderMarkdown } from "../../lib/markdown";

/**
 * Hosted pages of published artifacts (PUBLIC_BASE_URL/p/:slug).
 *
 * Markdown is rendered to sanitized HTML and served under a CSP with no script
 * source at all. HTML artifacts are author-controlled script, so they never run
 * on the service's origin: /p/:slug is a wrapper whose only content is an
 * iframe with `sandbox="allow-scripts"` (no allow-same-origin: the frame gets
 * an opaque origin, so no cookies, storage or credentialed API calls), and the
 * framed /p/:slug/raw response carries `Content-Security-Policy: sandbox
 * allow-scripts` itself, so it is equally isolated when opened directly. Its
 * `default-src 'none'` also blocks fetch/XHR/WebSocket out of the frame.
 */

export const MARKDOWN_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const HTML_WRAPPER_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The raw page of an HTML artifact cannot reach the network (API-DECISIONS "Wave 3"): no `http:`,
 * `https:` or `*` source in any directive — inline script and styles, `data:` images, fonts and
 * media only — so nothing a visitor types can be sent anywhere (not even as an image URL).
 */
export const HTML_RAW_CSP =
  "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
  "img-src data:; font-src data:; media-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

const humanDate = (iso: string) =>
  new Date(iso).toLocaleDateString("en-US", { year: "numeric", month: "long", day: "numeric", timeZone: "UTC" });

export function markdownPage(a: Artifact, opts: { noindex: boolean }): string {
  const summary = a.summary.trim() ? `<p class="summary">${escapeHtml(a.summary)}</p>\n` : "";
  const body = `<main>
<header class="doc">
<h1>${escapeHtml(a.title)}</h1>
${summary}<p class="meta">Updated <time datetime="${escapeHtml(a.updatedAt)}">${escapeHtml(humanDate(a.updatedAt))}</time></p>
</header>
<article>
${renderMarkdown(a.content)}
</article>
</main>`;
  const head = summary ? `<meta name="description" content="${escapeHtml(a.summary.slice(0, 300))}">\n` : "";
  return htmlDocument({ title: a.title, head, body, noindex: opts.noindex });
}

/**
 * The Markdown page, rendered once per revision and kept in the Workers cache
 * (about 1.6 ms of CPU per 10 KB of Markdown, 160 ms per MB, warm), so a
 * popular page does not re-render on every view. The key holds the revision
 * and updated_at, so any change misses; access is checked before this is
 * called, so a cached body is never served to someone who may not see it.
 * On workers.dev, where the Cache API is a no-op, every view renders.
 */
export async function cachedMarkdownPage(
  a: Artifact,
  opts: { noindex: boolean },
  ctx: { cacheOrigin: string; waitUntil: (p: Promise<unknown>) => void },
): Promise<string> {
  const cache = (globalThis as { caches?: { default?: Cache } }).caches?.default;
  const key = new Request(
    `${ctx.cacheOrigin}/__artifact-render/${encodeURIComponent(a.id)}/${a.revision}/${encodeURIComponent(a.updatedAt)}/${opts.noindex ? 1 : 0}`,
  );
  if (cache) {
    try {
      const hit = await cache.match(key);
      if (hit) return await hit.text();
    } catch {
      // A cache failure only costs a render.
    }
  }
  const html = markdownPage(a, opts);
  if (cache) {
    ctx.waitUntil(
      cache.put(key, new Response(html, { headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "max-age=86400" } })).catch(() => {}),
    );
  }
  return html;
}

export function htmlWrapperPage(a: Artifact, opts: { noindex: boolean }): string {
  const body = `<iframe src="/p/${encodeURIComponent(a.slug)}/raw" sandbox="allow-scripts" title="${escapeHtml(a.title)}" referrerpolicy="no-referrer"></iframe>`;
  return htmlDocument({
    title: a.title,
    body,
    noindex: opts.noindex,
    css: "html,body{margin:0;height:100%;background:#fff}iframe{display:block;border:0;width:100%;height:100%}",
  });
}

export function notFoundPage(): string {
  return htmlDocument({
    title: "Page not found",
    noindex: true,
    body: `<main>
<header class="doc"><h1>Page not found</h1></header>
<article><p>This page does not exist, is no longer published, or you do not have access to it. If it was shared with you privately, sign in with an account of its organization and reload.</p></article>
</main>`,
  });
}
