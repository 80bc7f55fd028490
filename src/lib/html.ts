/** Escaping for text and attribute values in server-rendered pages. */
export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Headers every server-rendered page carries, on top of its own CSP. */
export const PAGE_SECURITY_HEADERS: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  // Unlisted pages are capability URLs: never leak them to linked sites.
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
};

/** The readable layout of server-rendered pages: system fonts, ~720px column, tables and code styled, dark mode. */
export const READABLE_CSS = `
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;--line:#d1d9e0;--code:#f6f8fa;--link:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--line:#3d444d;--code:#151b23;--link:#4493f8}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.65 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif}
main{max-width:720px;margin:0 auto;padding:48px 20px 80px}
header.doc{border-bottom:1px solid var(--line);margin-bottom:32px;padding-bottom:16px}
header.doc h1{font-size:2.1em;line-height:1.25;margin:0 0 8px}
header.doc .summary{color:var(--muted);font-size:1.1em;margin:0 0 8px}
header.doc .meta{color:var(--muted);font-size:.875em;margin:0}
article{overflow-wrap:break-word}
article h1,article h2,article h3,article h4,article h5,article h6{line-height:1.3;margin:1.6em 0 .6em}
article h1{font-size:1.75em}article h2{font-size:1.45em;border-bottom:1px solid var(--line);padding-bottom:.25em}article h3{font-size:1.2em}
article p,article ul,article ol,article blockquote,article pre,article table,article dl,article details{margin:0 0 1em}
article ul,article ol{padding-left:1.6em}
article li+li{margin-top:.25em}
article a{color:var(--link);text-decoration:underline;text-underline-offset:2px}
article blockquote{margin-left:0;padding:0 1em;color:var(--muted);border-left:4px solid var(--line)}
article code{font:.875em/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;background:var(--code);padding:.15em .35em;border-radius:4px}
article pre{background:var(--code);padding:14px 16px;border-radius:6px;overflow-x:auto}
article pre code{background:none;padding:0;font-size:.85em}
article table{border-collapse:collapse;display:block;max-width:100%;overflow-x:auto}
article th,article td{border:1px solid var(--line);padding:6px 12px;text-align:left;vertical-align:top}
article th{background:var(--code);font-weight:600}
article img{max-width:100%;height:auto}
article hr{border:0;border-top:1px solid var(--line);margin:2em 0}
article input[type=checkbox]{margin:0 .4em 0 0}
footer{margin-top:48px;color:var(--muted);font-size:.8em}
`;

export function htmlDocument(opts: { title: string; head?: string; body: string; noindex?: boolean; css?: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${opts.noindex ? '<meta name="robots" content="noindex, nofollow">\n' : ""}<title>${escapeHtml(opts.title)}</title>
${opts.head ?? ""}<style>${opts.css ?? READABLE_CSS}</style>
</head>
<body>
${opts.body}
</body>
</html>
`;
}
