import { h } from "./dom";
import { announce, type View } from "./view";

/** A cited passage, as the API's `sources` event and a message's metadata carry it. */
export interface Source {
  index: number;
  filename: string | null;
  text: string;
  page: number | null;
  url: string | null;
}

export interface BotMessage {
  el: HTMLDivElement;
  body: HTMLDivElement;
  sources: HTMLDivElement;
  id: number;
}

const sourceLabel = (s: Source) => `[${s.index}] ${s.filename || "Source"}${s.page ? ` (p. ${s.page})` : ""}`;

/** The conversation shown in the panel's log: questions, answers with their citations, notes. */
export class Transcript {
  private seq = 0;
  constructor(private readonly view: View) {}

  private scrollDown() {
    this.view.log.scrollTop = this.view.log.scrollHeight;
  }

  clear() {
    this.view.log.replaceChildren();
  }

  addUser(text: string) {
    this.view.log.appendChild(h("div", { class: "msg user" }, text));
    this.scrollDown();
  }

  addBot(): BotMessage {
    const el = h("div", { class: "msg bot" });
    const body = h("div", { class: "text" });
    const sources = h("div", { class: "sources", role: "list", "aria-label": "Sources" });
    el.append(body, sources);
    this.view.log.appendChild(el);
    this.scrollDown();
    return { el, body, sources, id: ++this.seq };
  }

  renderSources(bot: BotMessage, sources: Source[]) {
    bot.sources.replaceChildren();
    for (const s of sources) {
      const d = h("details", { id: `kbw-src-${bot.id}-${s.index}`, role: "listitem" });
      d.appendChild(h("summary", {}, sourceLabel(s)));
      d.appendChild(h("p", {}, s.text || ""));
      if (s.url && /^https?:\/\//i.test(s.url)) d.appendChild(h("a", { href: s.url, target: "_blank", rel: "noopener noreferrer" }, "Open the source"));
      bot.sources.appendChild(d);
    }
  }

  /** The answer as text nodes, with each [n] that names a source as a button opening that source. */
  renderAnswer(bot: BotMessage, text: string, sources: Source[]) {
    bot.body.replaceChildren();
    text.split(/\[(\d+)\]/).forEach((part, i) => {
      if (i % 2 === 0) {
        if (part) bot.body.appendChild(document.createTextNode(part));
        return;
      }
      const s = sources.find((x) => String(x.index) === part);
      if (!s) {
        bot.body.appendChild(document.createTextNode(`[${part}]`));
        return;
      }
      const b = h("button", { type: "button", class: "cite", "aria-label": `Source ${part}: ${s.filename || "passage"}` }, `[${part}]`);
      b.addEventListener("click", () => this.openSource(bot, part));
      bot.body.appendChild(b);
    });
    this.scrollDown();
  }

  private openSource(bot: BotMessage, index: string) {
    const d = this.view.root.getElementById(`kbw-src-${bot.id}-${index}`) as HTMLDetailsElement | null;
    if (!d) return;
    d.open = true;
    d.querySelector("summary")?.focus();
  }

  note(bot: BotMessage, text: string) {
    bot.el.appendChild(h("div", { class: "note" }, text));
  }

  welcome(text: string) {
    this.renderAnswer(this.addBot(), text, []);
  }

  /** A failure in words, shown as an answer and said to screen readers. */
  error(message: string) {
    const bot = this.addBot();
    bot.el.classList.add("error");
    this.renderAnswer(bot, message, []);
    announce(this.view, message);
  }
}
