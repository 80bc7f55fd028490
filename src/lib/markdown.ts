import { Marked } from "marked";
import * as xssModule from "xss";
import type { IWhiteList } from "xss";

/**
 * Markdown to HTML that is safe to serve on the service's own origin (published
 * artifacts, later shared chats). `marked` renders (raw HTML in the Markdown
 * passes through it), then an allow-list sanitizer keeps only document
 * structure: no scripts, event handlers, styles, frames, forms or
 * `javascript:` URLs. Links may be http(s), mailto or in-page anchors; images
 * http(s) or data:image. The pages that serve it add a CSP without
 * `script-src`, so a sanitizer miss still cannot run script.
 */

// xss is CommonJS: esbuild exposes its exports as named imports, the vitest pool only as `default`.
const xss = ((xssModule as unknown as { default?: typeof xssModule }).default ?? xssModule) as typeof xssModule;
const defaultSafeAttrValue = xss.safeAttrValue;

const marked = new Marked({ gfm: true, breaks: false, async: false });

const block = (...tags: string[]) => Object.fromEntries(tags.map((t) => [t, [] as string[]]));

const ALLOWED: IWhiteList = {
  ...block(
    "p", "br", "hr", "blockquote", "ul", "li", "strong", "b", "em", "i", "del", "s", "ins", "mark", "sub", "sup",
    "small", "kbd", "pre", "thead", "tbody", "tfoot", "tr", "table", "caption", "dl", "dt", "dd", "details",
    "summary", "span", "h1", "h2", "h3", "h4", "h5", "h6", "figure", "figcaption",
  ),
  a: ["href", "title"],
  img: ["src", "alt", "title", "width", "height"],
  ol: ["start"],
  code: ["class"],
  th: ["align"],
  td: ["align"],
  abbr: ["title"],
  // GFM task lists render disabled checkboxes.
  input: ["type", "checked", "disabled"],
};

const DROP_WITH_CONTENT = [
  "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "noscript", "template", "textarea",
  "select", "option", "svg", "math", "title", "head", "xml", "noembed", "noframes",
];

const LINK_OK = /^(https?:\/\/|mailto:|#)/i;
const IMAGE_OK = /^(https?:\/\/|data:image\/)/i;

const filter = new xss.FilterXSS({
  whiteList: ALLOWED,
  stripIgnoreTag: true,
  stripIgnoreTagBody: DROP_WITH_CONTENT,
  allowCommentTag: false,
  css: false,
  onTag(tag, html, info) {
    // Only task-list checkboxes; any other input (text fields, buttons) goes.
    if (tag === "input" && !info.isClosing && !/\btype\s*=\s*["']?checkbox["'\s>/]/i.test(html)) return "";
    return undefined;
  },
  onTagAttr(tag, name, value) {
    if (tag === "input" && name === "type" && value.toLowerCase() !== "checkbox") return "";
    if (tag === "code" && name === "class" && !/^language-[\w+-]{1,40}$/.test(value)) return "";
    if ((tag === "td" || tag === "th") && name === "align" && !/^(left|right|center)$/.test(value)) return "";
    return undefined;
  },
  safeAttrValue(tag, name, value, cssFilter) {
    // The default decodes entities and strips control characters before checking schemes.
    const v = defaultSafeAttrValue(tag, name, value, cssFilter);
    if (name === "href") return LINK_OK.test(v) ? v : "";
    if (name === "src") return tag === "img" && IMAGE_OK.test(v) ? v : "";
    return v;
  },
});

export function sanitizeHtml(html: string): string {
  // Only real tags remain after sanitizing (text `<` is escaped), so every `<a ` is a link.
  return filter.process(html).replace(/<a /g, '<a rel="nofollow noopener noreferrer" ');
}

export function renderMarkdown(markdown: string): string {
  return sanitizeHtml(marked.parse(markdown, { async: false }) as string);
}
