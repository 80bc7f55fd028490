import { escapeHtml, htmlDocument, PAGE_SECURITY_HEADERS, READABLE_CSS } from "../../lib/html";
import type { sharedTranscript } from "../../services/chats/sharing";

type Transcript = NonNullable<Awaited<ReturnType<typeof sharedTranscript>>>;

/** Headers of the share page: no script at all, nothing framed, nothing leaked. */
export const SHARE_PAGE_HEADERS: Record<string, string> = {
  ...PAGE_SECURITY_HEADERS,
  "Content-Security-Policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
};

const CHAT_CSS = `${READABLE_CSS}
.msg{border:1px solid var(--line);border-radius:10px;padding:12px 16px;margin:14px 0}
.msg.user{background:var(--code)}
.role{font-size:.75em;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin-bottom:4px}
a.cite{color:var(--link);text-decoration:none;font-size:.85em}
ol.sources{font-size:.85em;color:var(--muted);padding-left:1.6em;margin:10px 0 0}
ol.sources li{margin:4px 0}`;

/** Escaped text; **bold**, line breaks and [n] citations linked to the message's source list. */
function formatContent(text: string, anchor: string): string {
  return escapeHtml(text)
    .replace(/\*\*(.+?)\*\*/g, "<strong>$1</strong>")
    .replace(/\[(\d{1,3})\]/g, `<a class="cite" href="#${anchor}-$1">[$1]</a>`)
    .replace(/\n/g, "<br>");
}

export function renderSharePage(t: Transcript | null): string {
  if (!t) {
    return htmlDocument({
      title: "Chat not available",
      noindex: true,
      css: CHAT_CSS,
      body: `<main><h1>This chat is not available</h1><p>It does not exist, is private, or you need to sign in.</p></main>`,
    });
  }
  const messages = t.messages
    .map((m, i) => {
      const sources = m.metadata?.sources ?? [];
      const list = sources.length
        ? `<ol class="sources">${sources
            .map((s) => {
              const label = escapeHtml(s.filename ?? s.url ?? "source");
              const excerpt = escapeHtml(s.text.slice(0, 400)) + (s.text.length > 400 ? "…" : "");
              return `<li id="m${i}-${s.index}" value="${s.index}"><strong>${label}</strong>${s.page ? `, page ${s.page}` : ""}: ${excerpt}</li>`;
            })
            .join("")}</ol>`
        : "";
      return `<div class="msg ${m.role}"><div class="role">${m.role}</div><div>${formatContent(m.content, `m${i}`)}</div>${list}</div>`;
    })
    .join("\n");
  const title = t.chat.title ?? "Shared chat";
  return htmlDocument({
    title,
    noindex: t.chat.accessLevel !== "public",
    css: CHAT_CSS,
    body: `<main><header class="doc"><h1>${escapeHtml(title)}</h1><p class="meta">Knowledge base: ${escapeHtml(
      t.chat.knowledgeBaseName ?? t.chat.knowledgeBaseId,
    )}</p></header>${t.chat.transcriptTruncated ? "<p class=\"meta\">Only the 200 most recent messages are shown.</p>" : ""}${messages}</main>`,
  });
}
