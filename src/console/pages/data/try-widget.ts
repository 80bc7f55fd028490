import { api, unwrap } from "../../api/client";

/**
 * "Try the widget on this page": the widget asks its page's backend for tokens (POST data-token-url). Here the
 * console page plays that backend in the browser: a POST to TOKEN_PATH never leaves the page, it mints a
 * token through the API with the signed-in user's session, for this origin only, as a real backend would with
 * its API key. Everything else goes to the network unchanged.
 */
export const TOKEN_PATH = "/console/_widget-try-token";

interface TryTarget {
  tenantId: string;
  kbId: string;
  subject: string;
}

let target: TryTarget | null = null;
let installed = false;

function install() {
  if (installed) return;
  installed = true;
  const network = window.fetch.bind(window);
  window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input), window.location.href);
    if (url.origin !== window.location.origin || url.pathname !== TOKEN_PATH || (init?.method ?? "GET") !== "POST" || !target) return network(input, init);
    const t = target;
    try {
      const body = await unwrap(
        api.POST("/api/v1/embed/tokens", {
          body: { tenant_id: t.tenantId, knowledge_base_id: t.kbId, external_subject_id: t.subject, allowed_origins: [window.location.origin], ttl_seconds: 600 },
          fetch: network,
        }),
      );
      return new Response(JSON.stringify(body), { status: 201, headers: { "Content-Type": "application/json" } });
    } catch (e) {
      return new Response(JSON.stringify({ error: { message: e instanceof Error ? e.message : String(e) } }), { status: 403, headers: { "Content-Type": "application/json" } });
    }
  };
}

function host(): HTMLElement | null {
  return document.querySelector<HTMLElement>("[data-kb-chat-widget]");
}

declare global {
  interface Window {
    KbChatWidget?: { open(): void; close(): void };
  }
}

/** Loads /widget.js on this page (once) for the knowledge base, or points the loaded one at it, and opens it. */
export function tryWidget(next: TryTarget, opts: { title: string; color: string }): Promise<void> {
  install();
  const changed = target && (target.kbId !== next.kbId || target.tenantId !== next.tenantId);
  target = next;
  const el = host();
  if (el && !changed) {
    el.hidden = false;
    window.KbChatWidget?.open();
    return Promise.resolve();
  }
  // Another knowledge base: the widget keeps its first token's knowledge base, so start it afresh.
  if (el) return Promise.resolve(window.location.reload());
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = "/widget.js";
    s.dataset.tokenUrl = TOKEN_PATH;
    s.dataset.title = opts.title;
    s.dataset.primaryColor = opts.color;
    s.dataset.open = "true";
    s.onload = () => resolve();
    s.onerror = () => reject(new Error("The widget script (/widget.js) could not be loaded."));
    document.body.append(s);
  });
}

/** Hides the widget when the user leaves the page where it is being tried. */
export function hideWidget() {
  window.KbChatWidget?.close();
  const el = host();
  if (el) el.hidden = true;
}
