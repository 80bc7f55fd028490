import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";

/** Page chrome removed when Readability cannot find an article. */
const CHROME_SELECTORS = [
  "script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "form", "button",
  "nav", "header", "footer", "aside", "[role=navigation]", "[role=banner]", "[role=contentinfo]", "[aria-hidden=true]",
  ".nav", ".navbar", ".menu", ".sidebar", ".footer", ".header", ".cookie", ".cookies", ".breadcrumb", ".breadcrumbs",
].join(",");

function turndown(): TurndownService {
  const td = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "*" });
  td.remove(["script", "style", "noscript", "template"] as unknown as TurndownService.Filter);
  return td;
}

function cleanTitle(s: string | null | undefined): string | undefined {
  const t = (s ?? "").replace(/\s+/g, " ").trim();
  return t ? t.slice(0, 200) : undefined;
}

/** Markdown of an HTML fragment. Turndown needs a DOM node (a string would need a global `document`). */
export function fragmentToMarkdown(fragmentHtml: string): string {
  const { document } = parseHTML(`<!DOCTYPE html><html><body><div id="__root">${fragmentHtml}</div></body></html>`);
  const root = document.getElementById("__root");
  if (!root) return "";
  return turndown()
    .turndown(root as unknown as TurndownService.Node)
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/**
 * The readable content of a web page as Markdown: Readability picks the
 * article (dropping navigation, headers, footers, sidebars); when it finds
 * none, the body minus the usual chrome is used.
 */
export function htmlToMarkdown(html: string, opts: { readable?: boolean } = {}): { title?: string; markdown: string } {
  const { document } = parseHTML(html);
  const title =
    cleanTitle(document.querySelector("meta[property='og:title']")?.getAttribute("content")) ??
    cleanTitle(document.querySelector("title")?.textContent) ??
    cleanTitle(document.querySelector("h1")?.textContent);

  let contentHtml: string | null = null;
  if (opts.readable !== false) {
    try {
      // Readability mutates the document it is given: give it its own copy.
      const copy = parseHTML(html).document;
      const article = new Readability(copy as unknown as ConstructorParameters<typeof Readability>[0], { charThreshold: 100 }).parse();
      if (article?.content && (article.textContent ?? "").trim().length >= 50) contentHtml = String(article.content);
    } catch (e) {
      console.warn("readability failed; using the page body:", e);
    }
  }
  if (contentHtml === null) {
    const body = document.body ?? document.documentElement;
    for (const el of Array.from(body?.querySelectorAll(CHROME_SELECTORS) ?? [])) (el as { remove(): void }).remove();
    contentHtml = body?.innerHTML ?? "";
  }
  return { title, markdown: fragmentToMarkdown(contentHtml ?? "") };
}
