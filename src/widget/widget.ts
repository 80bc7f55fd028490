import { AnswerStream, Conversation } from "./chat";
import type { WidgetConfig } from "./config";
import { messageOf } from "./dom";
import { ApiClient } from "./token";
import { Transcript } from "./transcript";
import { announce, buildView, type View } from "./view";

/** The chat widget on a page: its view, the visitor's conversation, and the answer being streamed. */
export class Widget {
  readonly view: View;
  private readonly client: ApiClient;
  private readonly transcript: Transcript;
  private readonly chat: Conversation;
  private streaming: { controller: AbortController; stopTimer?: ReturnType<typeof setTimeout> } | null = null;

  constructor(private readonly cfg: WidgetConfig) {
    this.view = buildView(cfg);
    this.client = new ApiClient(cfg, () => !this.view.panel.hidden);
    this.transcript = new Transcript(this.view);
    this.chat = new Conversation(cfg, this.client, this.transcript);
  }

  private setBusy(busy: boolean) {
    this.view.sendBtn.hidden = busy;
    this.view.stopBtn.hidden = !busy;
    this.view.input.setAttribute("aria-disabled", busy ? "true" : "false");
  }

  get busy(): boolean {
    return this.streaming !== null;
  }

  async ask(question: string) {
    this.setBusy(true);
    const controller = new AbortController();
    this.streaming = { controller };
    // The saved conversation is shown first, then the new question below it.
    await this.chat.restore();
    this.transcript.addUser(question);
    const answer = new AnswerStream(this.transcript, this.transcript.addBot());
    const bot = answer.bot;
    bot.el.setAttribute("aria-busy", "true");
    announce(this.view, "Answering…");
    try {
      const res = await this.chat.send(question, controller.signal);
      await answer.read(res.body!);
      if (!answer.finished && !controller.signal.aborted) this.transcript.note(bot, "The connection ended before the answer was complete.");
    } catch (e) {
      if (controller.signal.aborted) this.transcript.note(bot, "Stopped.");
      else {
        bot.el.classList.add("error");
        if (!answer.text) this.transcript.renderAnswer(bot, messageOf(e), []);
        else this.transcript.note(bot, messageOf(e));
      }
    } finally {
      clearTimeout(this.streaming?.stopTimer);
      this.streaming = null;
      bot.el.setAttribute("aria-busy", "false");
      this.setBusy(false);
      announce(this.view, bot.el.classList.contains("error") ? "The answer could not be completed" : "Answer complete");
      if (!this.view.panel.hidden) this.view.input.focus();
    }
  }

  async stop() {
    const s = this.streaming;
    if (!s) return;
    if (!this.chat.chatId) return s.controller.abort();
    this.view.stopBtn.disabled = true;
    try {
      await this.client.call(`/chats/${this.chat.chatId}/stop`, { method: "POST" });
    } catch {
      /* the abort below still ends it */
    } finally {
      this.view.stopBtn.disabled = false;
    }
    // The server ends the stream with done (status partial); if it does not, stop reading.
    s.stopTimer = setTimeout(() => s.controller.abort(), 3000);
  }

  open() {
    const v = this.view;
    v.panel.hidden = false;
    v.launcher.setAttribute("aria-expanded", "true");
    v.launcher.setAttribute("aria-label", `Close chat: ${this.cfg.title}`);
    v.input.focus();
    void this.chat.restore();
    if (this.client.expiresWithin(60_000)) this.client.token(true).catch(() => {});
  }

  close() {
    const v = this.view;
    v.panel.hidden = true;
    v.launcher.setAttribute("aria-expanded", "false");
    v.launcher.setAttribute("aria-label", `Open chat: ${this.cfg.title}`);
    v.launcher.focus();
  }

  async reset() {
    if (this.streaming) await this.stop();
    await this.chat.forget();
    this.transcript.clear();
    this.transcript.welcome(this.cfg.welcome);
    announce(this.view, "New conversation");
    this.view.input.focus();
  }
}

/** Buttons and keys: the launcher toggles, Escape closes, Enter sends (Shift+Enter is a new line). */
export function bindControls(w: Widget) {
  const v = w.view;
  v.launcher.addEventListener("click", () => (v.panel.hidden ? w.open() : w.close()));
  v.closeBtn.addEventListener("click", () => w.close());
  v.resetBtn.addEventListener("click", () => void w.reset());
  v.stopBtn.addEventListener("click", () => void w.stop());
  v.wrap.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !v.panel.hidden) {
      e.preventDefault();
      w.close();
    }
  });
  v.input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      v.form.requestSubmit();
    }
  });
  v.form.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = v.input.value.trim();
    if (!q || w.busy) return;
    v.input.value = "";
    void w.ask(q);
  });
}
