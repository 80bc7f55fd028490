import type { WidgetConfig } from "./config";
import { h } from "./dom";
import { widgetCss } from "./styles";

const SVG = "http://www.w3.org/2000/svg";

/** The widget's elements: a launcher button and a chat panel, in a shadow root appended to the page. */
export interface View {
  root: ShadowRoot;
  wrap: HTMLDivElement;
  launcher: HTMLButtonElement;
  panel: HTMLDivElement;
  log: HTMLDivElement;
  status: HTMLDivElement;
  form: HTMLFormElement;
  input: HTMLTextAreaElement;
  sendBtn: HTMLButtonElement;
  stopBtn: HTMLButtonElement;
  resetBtn: HTMLButtonElement;
  closeBtn: HTMLButtonElement;
}

function launcherButton(title: string): HTMLButtonElement {
  const launcher = h("button", { class: "launcher", type: "button", "aria-expanded": "false", "aria-controls": "kbw-panel", "aria-label": `Open chat: ${title}` });
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", "M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2zm3 6v2h2v-2H7zm4 0v2h2v-2h-2zm4 0v2h2v-2h-2z");
  svg.appendChild(path);
  launcher.appendChild(svg);
  return launcher;
}

/** A constructed stylesheet is not subject to the page's CSP style-src; a <style> element is the fallback. */
function adoptStyles(root: ShadowRoot, css: string) {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [sheet];
  } catch {
    root.append(h("style", {}, css));
  }
}

export function buildView(cfg: WidgetConfig): View {
  const host = h("div", { "data-kb-chat-widget": "" });
  const root = host.attachShadow({ mode: "open" });
  const wrap = h("div", { class: "wrap" });
  const launcher = launcherButton(cfg.title);
  const panel = h("div", { id: "kbw-panel", class: "panel", role: "dialog", "aria-modal": "false", "aria-labelledby": "kbw-title" });
  panel.hidden = true;
  const header = h("header");
  const resetBtn = h("button", { type: "button", "aria-label": "Start a new conversation" }, "New");
  const closeBtn = h("button", { type: "button", "aria-label": "Close chat" }, "✕");
  header.append(h("h2", { id: "kbw-title" }, cfg.title), resetBtn, closeBtn);
  const log = h("div", { class: "log", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
  const status = h("div", { class: "sr", role: "status", "aria-live": "polite" });
  const form = h("form", { "aria-label": "Ask a question" });
  const label = h("label", { for: "kbw-input", class: "sr" }, "Your question");
  const input = h("textarea", { id: "kbw-input", rows: "1", placeholder: cfg.placeholder, maxlength: "8000", autocomplete: "off" });
  const sendBtn = h("button", { class: "send", type: "submit" }, "Send");
  const stopBtn = h("button", { class: "stop", type: "button", "aria-label": "Stop the answer" }, "Stop");
  stopBtn.hidden = true;
  form.append(label, input, sendBtn, stopBtn);
  panel.append(header, log, status, form);
  wrap.append(panel, launcher);
  adoptStyles(root, widgetCss(cfg.color, cfg.side));
  root.append(wrap);
  (document.body || document.documentElement).appendChild(host);
  return { root, wrap, launcher, panel, log, status, form, input, sendBtn, stopBtn, resetBtn, closeBtn };
}

/** Says something to screen readers (the status region), after a beat so a repeat is announced too. */
export function announce(view: View, text: string) {
  view.status.textContent = "";
  setTimeout(() => (view.status.textContent = text), 50);
}
