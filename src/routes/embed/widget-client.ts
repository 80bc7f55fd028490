/**
 * The chat widget that customers' pages load from GET /widget.js. It runs in the BROWSER: the Worker
 * serves `(${kbChatWidget.toString()})(document.currentScript)` (src/routes/embed/widget.ts), so this
 * function must be self-contained — no imports, no references to anything outside its body. esbuild
 * turns the TypeScript into plain JavaScript when the Worker is built; there is no separate build step.
 *
 *   <script src="https://kb.example.com/widget.js" data-token-url="/kb-token" defer></script>
 *
 * What it does: a launcher button and a chat panel inside a shadow root (the page's CSS cannot break it
 * and its CSS cannot leak out); a token fetched from the page's own backend (`data-token-url`, POST,
 * same-origin cookies) and refreshed before it expires; a chat created on first question and kept in
 * localStorage (reloaded with GET /chats/:id/messages); answers streamed over SSE (fetch + a stream
 * reader: partial `final_response` text, `sources`, `done`, `error`, `ping`), citations `[n]` as buttons
 * that open their passage; a Stop button (POST /chats/:id/stop). Keyboard and screen readers: labelled
 * controls, focus moved into the panel on open and back to the launcher on close, Escape closes, the
 * transcript is an aria-live log and the answer being streamed is aria-busy until it is complete.
 * Everything from the server is rendered with textContent — never as HTML.
 *
 * Attributes: data-token-url (required), data-api-base (default: where widget.js came from),
 * data-title, data-primary-color, data-position (right|left), data-model (default local-extractive),
 * data-agent-mode (quick|deep, default quick), data-welcome, data-placeholder, data-open ("true").
 */

// Browser globals (the Worker's type library has no DOM). Only this file runs in a browser.
declare const document: any;
declare const window: any;
declare const location: any;
type El = any;

export function kbChatWidget(script: El): void {
  const w = window;
  const doc = document;
  // The browser's fetch (typed loosely: the Worker's types describe a different RequestInit).
  const bfetch: (url: string, init?: Record<string, any>) => Promise<any> = (url, init) => w.fetch(url, init);
  if (!script || w.__kbChatWidgetLoaded) return;
  w.__kbChatWidgetLoaded = true;
  const ds = script.dataset || {};
  const tokenUrl: string | undefined = ds.tokenUrl;
  if (!tokenUrl) {
    console.error("[kb-chat-widget] data-token-url is required");
    return;
  }
  const apiRoot = String(ds.apiBase || new URL(script.src, location.href).origin).replace(/\/+$/, "");
  const api = apiRoot + "/api/v1";
  const title: string = ds.title || "Ask a question";
  const supportsColor = (v: string) => !!(w.CSS && w.CSS.supports && w.CSS.supports("color", v));
  const color: string = ds.primaryColor && supportsColor(ds.primaryColor) ? ds.primaryColor : "#2563eb";
  const side = ds.position === "left" ? "left" : "right";
  const model: string = ds.model || "local-extractive";
  const agentMode = ds.agentMode === "deep" ? "deep" : "quick";
  const welcome: string = ds.welcome || "Hi! Ask me anything — answers cite their sources.";
  const placeholder: string = ds.placeholder || "Type your question…";

  // ---- small DOM helpers (text only) ------------------------------------
  const h = (tag: string, attrs: Record<string, string> = {}, text?: string): El => {
    const el = doc.createElement(tag);
    for (const k of Object.keys(attrs)) el.setAttribute(k, attrs[k]);
    if (text !== undefined) el.textContent = text;
    return el;
  };
  const store = {
    get(k: string): string | null {
      try {
        return w.localStorage.getItem(k);
      } catch {
        return null;
      }
    },
    set(k: string, v: string | null) {
      try {
        if (v === null) w.localStorage.removeItem(k);
        else w.localStorage.setItem(k, v);
      } catch {
        /* storage unavailable: the chat lasts for this page view */
      }
    },
  };
  const uuid = (): string => {
    if (w.crypto && w.crypto.randomUUID) return w.crypto.randomUUID();
    const b = w.crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 15) | 64;
    b[8] = (b[8] & 63) | 128;
    const x = Array.from(b, (n: number) => n.toString(16).padStart(2, "0")).join("");
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
  };

  // ---- the shadow root ----------------------------------------------------
  const host = h("div", { "data-kb-chat-widget": "" });
  const root = host.attachShadow({ mode: "open" });
  const css = `
:host{all:initial}
*{box-sizing:border-box}
.wrap{--p:${color};position:fixed;${side}:20px;bottom:20px;z-index:2147483000;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328}
button{font:inherit;cursor:pointer}
:focus-visible{outline:3px solid var(--p);outline-offset:2px}
.launcher{width:56px;height:56px;border-radius:50%;border:0;background:var(--p);color:#fff;box-shadow:0 4px 14px rgba(0,0,0,.25);display:flex;align-items:center;justify-content:center;margin-${side}:auto}
.launcher svg{width:28px;height:28px;fill:currentColor}
.panel{position:absolute;${side}:0;bottom:70px;width:min(380px,calc(100vw - 40px));height:min(560px,calc(100vh - 110px));background:#fff;border:1px solid #d1d9e0;border-radius:14px;box-shadow:0 12px 40px rgba(0,0,0,.25);display:flex;flex-direction:column;overflow:hidden}
.panel[hidden]{display:none}
header{display:flex;align-items:center;gap:8px;padding:10px 12px;background:var(--p);color:#fff}
header h2{flex:1;margin:0;font-size:16px;font-weight:600;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
header button{background:transparent;color:#fff;border:1px solid rgba(255,255,255,.5);border-radius:8px;padding:2px 8px}
.log{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:10px;background:#f6f8fa}
.msg{max-width:88%;padding:8px 11px;border-radius:12px;white-space:pre-wrap;overflow-wrap:anywhere}
.user{align-self:flex-end;background:var(--p);color:#fff;border-bottom-right-radius:4px}
.bot{align-self:flex-start;background:#fff;border:1px solid #d1d9e0;border-bottom-left-radius:4px}
.bot.error{border-color:#cf222e;color:#cf222e}
.note{font-size:12px;color:#59636e;margin-top:4px;white-space:normal}
.cite{border:0;background:none;color:var(--p);font-weight:600;padding:0 1px;font-size:.85em;vertical-align:super;line-height:1}
.sources{margin-top:6px;white-space:normal;display:flex;flex-direction:column;gap:4px}
details{border:1px solid #d1d9e0;border-radius:8px;padding:4px 8px;font-size:13px;background:#f6f8fa}
summary{cursor:pointer;font-weight:600;overflow-wrap:anywhere}
details p{margin:6px 0 2px;white-space:pre-wrap;color:#1f2328}
details a{color:var(--p)}
form{display:flex;gap:8px;padding:10px;border-top:1px solid #d1d9e0;background:#fff}
textarea{flex:1;resize:none;font:inherit;padding:8px 10px;border:1px solid #d1d9e0;border-radius:10px;min-height:40px;max-height:120px;color:#1f2328;background:#fff}
.send,.stop{border:0;border-radius:10px;padding:0 14px;background:var(--p);color:#fff}
.stop{background:#59636e}
.send[disabled]{opacity:.5;cursor:default}
[hidden]{display:none!important}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (prefers-color-scheme:dark){.panel,form,textarea,.bot{background:#161b22;color:#e6edf3;border-color:#3d444d}.log,details{background:#0d1117;border-color:#3d444d}details p{color:#e6edf3}.note{color:#9198a1}}
`;
  const wrap = h("div", { class: "wrap" });
  const panelId = "kbw-panel";
  const launcher = h("button", { class: "launcher", type: "button", "aria-expanded": "false", "aria-controls": panelId, "aria-label": `Open chat: ${title}` });
  const svg = doc.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  const path = doc.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", "M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2zm3 6v2h2v-2H7zm4 0v2h2v-2h-2zm4 0v2h2v-2h-2z");
  svg.appendChild(path);
  launcher.appendChild(svg);

  const panel = h("div", { id: panelId, class: "panel", role: "dialog", "aria-modal": "false", "aria-labelledby": "kbw-title" });
  panel.hidden = true;
  const header = h("header");
  const heading = h("h2", { id: "kbw-title" }, title);
  const resetBtn = h("button", { type: "button", "aria-label": "Start a new conversation" }, "New");
  const closeBtn = h("button", { type: "button", "aria-label": "Close chat" }, "✕");
  header.append(heading, resetBtn, closeBtn);
  const log = h("div", { class: "log", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
  const status = h("div", { class: "sr", role: "status", "aria-live": "polite" });
  const form = h("form", { "aria-label": "Ask a question" });
  const label = h("label", { for: "kbw-input", class: "sr" }, "Your question");
  const input = h("textarea", { id: "kbw-input", rows: "1", placeholder, maxlength: "8000", autocomplete: "off" });
  const sendBtn = h("button", { class: "send", type: "submit" }, "Send");
  const stopBtn = h("button", { class: "stop", type: "button", "aria-label": "Stop the answer" }, "Stop");
  stopBtn.hidden = true;
  form.append(label, input, sendBtn, stopBtn);
  panel.append(header, log, status, form);
  wrap.append(panel, launcher);
  // A constructed stylesheet is not subject to the page's CSP style-src; a <style> element is the fallback.
  try {
    const sheet = new w.CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [sheet];
  } catch {
    root.append(h("style", {}, css));
  }
  root.append(wrap);
  (doc.body || doc.documentElement).appendChild(host);

  const announce = (text: string) => {
    status.textContent = "";
    setTimeout(() => (status.textContent = text), 50);
  };

  // ---- token from the page's own backend ----------------------------------
  interface Tok {
    token: string;
    exp: number;
    tenantId: string;
    kbId: string;
  }
  let tok: Tok | null = null;
  let tokPending: Promise<Tok> | null = null;
  let refreshTimer: any = null;
  const fetchToken = async (): Promise<Tok> => {
    const res = await bfetch(tokenUrl, { method: "POST", credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!res.ok) throw new Error(`The chat is unavailable (token endpoint answered ${res.status})`);
    const j = await res.json();
    if (!j || typeof j.token !== "string") throw new Error("The chat is unavailable (no token)");
    const exp = Date.parse(j.expires_at) || Date.now() + 60_000;
    tok = { token: j.token, exp, tenantId: j.tenant_id || ds.tenantId, kbId: j.knowledge_base_id || ds.knowledgeBaseId };
    // Refresh a minute before expiry (or at 80% of a short lifetime) while the panel is open.
    clearTimeout(refreshTimer);
    const lifetime = exp - Date.now();
    refreshTimer = setTimeout(() => {
      if (!panel.hidden) getToken(true).catch(() => {});
    }, Math.max(5_000, Math.min(lifetime - 60_000, lifetime * 0.8)));
    return tok;
  };
  const getToken = async (force = false): Promise<Tok> => {
    if (!force && tok && tok.exp - Date.now() > 30_000) return tok;
    if (!tokPending) tokPending = fetchToken().finally(() => (tokPending = null));
    return tokPending;
  };
  const call = async (p: string, init: Record<string, any> = {}, retry = true): Promise<any> => {
    const t = await getToken();
    const res = await bfetch(api + p, { ...init, credentials: "omit", headers: { ...(init.headers || {}), Authorization: `Bearer ${t.token}` } });
    if (res.status === 401 && retry) {
      await getToken(true);
      return call(p, init, false);
    }
    return res;
  };
  const errorOf = async (res: any): Promise<string> => {
    try {
      const j = await res.json();
      return (j && j.error && j.error.message) || `Request failed (${res.status})`;
    } catch {
      return `Request failed (${res.status})`;
    }
  };

  // ---- rendering ------------------------------------------------------------
  interface Source {
    index: number;
    filename: string | null;
    text: string;
    page: number | null;
    url: string | null;
  }
  let msgSeq = 0;
  const scrollDown = () => (log.scrollTop = log.scrollHeight);
  const addUser = (text: string) => {
    log.appendChild(h("div", { class: "msg user" }, text));
    scrollDown();
  };
  const addBot = () => {
    const el = h("div", { class: "msg bot" });
    const body = h("div", { class: "text" });
    const sources = h("div", { class: "sources", role: "list", "aria-label": "Sources" });
    el.append(body, sources);
    log.appendChild(el);
    scrollDown();
    return { el, body, sources, id: ++msgSeq };
  };
  const sourceLabel = (s: Source) => `[${s.index}] ${s.filename || "Source"}${s.page ? ` (p. ${s.page})` : ""}`;
  const renderSources = (bot: ReturnType<typeof addBot>, sources: Source[]) => {
    bot.sources.replaceChildren();
    for (const s of sources) {
      const d = h("details", { id: `kbw-src-${bot.id}-${s.index}`, role: "listitem" });
      d.appendChild(h("summary", {}, sourceLabel(s)));
      d.appendChild(h("p", {}, s.text || ""));
      if (s.url && /^https?:\/\//i.test(s.url)) {
        d.appendChild(h("a", { href: s.url, target: "_blank", rel: "noopener noreferrer" }, "Open the source"));
      }
      bot.sources.appendChild(d);
    }
  };
  /** The answer as text nodes, with each [n] that names a source as a button opening that source. */
  const renderAnswer = (bot: ReturnType<typeof addBot>, text: string, sources: Source[]) => {
    const parts = text.split(/\[(\d+)\]/);
    bot.body.replaceChildren();
    parts.forEach((part, i) => {
      if (i % 2 === 0) {
        if (part) bot.body.appendChild(doc.createTextNode(part));
        return;
      }
      const s = sources.find((x) => String(x.index) === part);
      if (!s) {
        bot.body.appendChild(doc.createTextNode(`[${part}]`));
        return;
      }
      const b = h("button", { type: "button", class: "cite", "aria-label": `Source ${part}: ${s.filename || "passage"}` }, `[${part}]`);
      b.addEventListener("click", () => {
        const d = root.getElementById(`kbw-src-${bot.id}-${part}`);
        if (!d) return;
        d.open = true;
        d.querySelector("summary").focus();
      });
      bot.body.appendChild(b);
    });
    scrollDown();
  };
  const note = (bot: ReturnType<typeof addBot>, text: string) => bot.el.appendChild(h("div", { class: "note" }, text));

  // ---- the chat -------------------------------------------------------------
  let chatId: string | null = null;
  let restoring: Promise<void> | null = null;
  const chatKey = (t: Tok) => `kb-chat-widget:${api}:${t.kbId}`;
  const forgetChat = async () => {
    chatId = null;
    const t = await getToken().catch(() => null);
    if (t) store.set(chatKey(t), null);
  };
  const ensureChat = async (): Promise<string> => {
    if (chatId) return chatId;
    const t = await getToken();
    const id = uuid();
    const res = await call("/chats", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id, tenant_id: t.tenantId, knowledge_base_id: t.kbId, model, agent_mode: agentMode }),
    });
    if (res.status !== 201) throw new Error(await errorOf(res));
    chatId = id;
    store.set(chatKey(t), id);
    return id;
  };
  const showWelcome = () => {
    const bot = addBot();
    renderAnswer(bot, welcome, []);
  };
  const restore = () => (restoring ??= load());
  const load = async () => {
    try {
      const t = await getToken();
      const saved = store.get(chatKey(t));
      if (!saved) return showWelcome();
      let res = await call(`/chats/${encodeURIComponent(saved)}/messages?limit=200`);
      if (res.status === 404 || res.status === 403) {
        store.set(chatKey(t), null);
        return showWelcome();
      }
      if (!res.ok) throw new Error(await errorOf(res));
      let j = await res.json();
      if (j.total > 200) {
        res = await call(`/chats/${encodeURIComponent(saved)}/messages?limit=200&offset=${j.total - 200}`);
        if (res.ok) j = await res.json();
      }
      chatId = saved;
      if (!j.messages.length) showWelcome();
      for (const m of j.messages) {
        if (m.role === "user") addUser(m.content);
        else if (m.role === "assistant") {
          const bot = addBot();
          const sources: Source[] = (m.metadata && m.metadata.sources) || [];
          renderSources(bot, sources);
          renderAnswer(bot, m.content, sources);
          if (m.metadata && m.metadata.status === "partial") note(bot, "Stopped.");
        }
      }
    } catch (e: any) {
      showError(e && e.message ? e.message : String(e));
    }
  };
  const showError = (message: string) => {
    const bot = addBot();
    bot.el.classList.add("error");
    renderAnswer(bot, message, []);
    announce(message);
  };

  let streaming: { controller: AbortController; stopTimer: any } | null = null;
  const setBusy = (busy: boolean) => {
    sendBtn.hidden = busy;
    stopBtn.hidden = !busy;
    input.setAttribute("aria-disabled", busy ? "true" : "false");
  };

  const ask = async (question: string) => {
    setBusy(true);
    const controller = new AbortController();
    streaming = { controller, stopTimer: null };
    // The saved conversation is shown first, then the new question below it.
    await restore();
    addUser(question);
    const bot = addBot();
    bot.el.setAttribute("aria-busy", "true");
    announce("Answering…");
    let text = "";
    let sources: Source[] = [];
    let finished = false;
    try {
      let id = await ensureChat();
      const send = () =>
        call(`/chats/${id}/messages/stream`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
          body: JSON.stringify({ content: question, model, agent_mode: agentMode }),
          signal: controller.signal,
        });
      let res = await send();
      if (res.status === 404 || res.status === 409) {
        // The saved chat is gone or terminated: start a new one.
        await forgetChat();
        id = await ensureChat();
        res = await send();
      }
      if (!res.ok || !res.body) throw new Error(await errorOf(res));
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = "";
      const handle = (block: string) => {
        let event = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (event === "ping" || !data.length) return;
        let e: any;
        try {
          e = JSON.parse(data.join("\n"));
        } catch {
          return;
        }
        if (e.type === "sources") {
          sources = Array.isArray(e.sources) ? e.sources : [];
          renderSources(bot, sources);
          renderAnswer(bot, text, sources);
        } else if (e.type === "final_response") {
          text = e.isComplete ? String(e.content) : text + String(e.content);
          renderAnswer(bot, text, sources);
        } else if (e.type === "done") {
          finished = true;
          if (e.status === "partial") note(bot, "Stopped.");
        } else if (e.type === "error") {
          finished = true;
          bot.el.classList.add("error");
          note(bot, e.message || "The answer could not be completed.");
        }
      };
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          handle(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
      if (buf.trim()) handle(buf);
      if (!finished && !controller.signal.aborted) note(bot, "The connection ended before the answer was complete.");
    } catch (e: any) {
      if (controller.signal.aborted) note(bot, "Stopped.");
      else {
        bot.el.classList.add("error");
        if (!text) renderAnswer(bot, e && e.message ? e.message : String(e), []);
        else note(bot, e && e.message ? e.message : String(e));
      }
    } finally {
      clearTimeout(streaming && streaming.stopTimer);
      streaming = null;
      bot.el.setAttribute("aria-busy", "false");
      setBusy(false);
      announce(bot.el.classList.contains("error") ? "The answer could not be completed" : "Answer complete");
      if (!panel.hidden) input.focus();
    }
  };

  const stop = async () => {
    const s = streaming;
    if (!s) return;
    if (!chatId) return s.controller.abort();
    stopBtn.disabled = true;
    try {
      await call(`/chats/${chatId}/stop`, { method: "POST" });
    } catch {
      /* the abort below still ends it */
    } finally {
      stopBtn.disabled = false;
    }
    // The server ends the stream with done (status partial); if it does not, stop reading.
    s.stopTimer = setTimeout(() => s.controller.abort(), 3000);
  };

  // ---- open, close, keyboard ------------------------------------------------
  const open = () => {
    panel.hidden = false;
    launcher.setAttribute("aria-expanded", "true");
    launcher.setAttribute("aria-label", `Close chat: ${title}`);
    input.focus();
    restore();
    if (tok && tok.exp - Date.now() < 60_000) getToken(true).catch(() => {});
  };
  const close = () => {
    panel.hidden = true;
    launcher.setAttribute("aria-expanded", "false");
    launcher.setAttribute("aria-label", `Open chat: ${title}`);
    launcher.focus();
  };
  launcher.addEventListener("click", () => (panel.hidden ? open() : close()));
  closeBtn.addEventListener("click", close);
  resetBtn.addEventListener("click", async () => {
    if (streaming) await stop();
    await forgetChat();
    log.replaceChildren();
    showWelcome();
    announce("New conversation");
    input.focus();
  });
  wrap.addEventListener("keydown", (e: any) => {
    if (e.key === "Escape" && !panel.hidden) {
      e.preventDefault();
      close();
    }
  });
  input.addEventListener("keydown", (e: any) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener("submit", (e: any) => {
    e.preventDefault();
    const q = input.value.trim();
    if (!q || streaming) return;
    input.value = "";
    ask(q);
  });
  stopBtn.addEventListener("click", () => {
    stop();
  });
  if (ds.open === "true") open();
  // A small handle for the host page: KbChatWidget.open() / .close().
  w.KbChatWidget = { open, close };
}
