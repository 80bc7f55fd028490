/**
 * The chat widget that customers' pages load from GET /widget.js, bundled by `npm run build:assets`
 * (src/widget/build.mjs) into dist/assets/widget.js, which the Worker serves (src/routes/embed/widget.ts).
 *
 *   <script src="https://kb.example.com/widget.js" data-token-url="/kb-token" defer></script>
 *
 * A launcher button and a chat panel inside a shadow root; a token from the page's own backend, refreshed
 * before it expires; a chat created on the first question and kept in localStorage; answers streamed over SSE
 * with citations [n] as buttons that open their passage; a Stop button. Keyboard and screen readers: labelled
 * controls, focus moved into the panel on open and back to the launcher on close, Escape closes, the transcript
 * is an aria-live log and the answer being streamed is aria-busy until it is complete. Everything from the
 * server is rendered as text, never as HTML. Settings: src/widget/config.ts.
 */
import { readConfig } from "./config";
import { bindControls, Widget } from "./widget";

declare global {
  interface Window {
    __kbChatWidgetLoaded?: boolean;
    /** A small handle for the host page: KbChatWidget.open() / .close(). */
    KbChatWidget?: { open(): void; close(): void };
  }
}

function start(script: HTMLScriptElement | null) {
  // One widget per page, even when the tag is included twice.
  if (!script || window.__kbChatWidgetLoaded) return;
  window.__kbChatWidgetLoaded = true;
  const cfg = readConfig(script);
  if (!cfg) return;
  const widget = new Widget(cfg);
  bindControls(widget);
  if (cfg.openOnLoad) widget.open();
  window.KbChatWidget = { open: () => widget.open(), close: () => widget.close() };
}

start(document.currentScript as HTMLScriptElement | null);
