import type { WidgetConfig } from "./config";
import { messageOf, store, uuid } from "./dom";
import { readEvents, type StreamEvent } from "./sse";
import { errorOf, type ApiClient, type Token } from "./token";
import type { BotMessage, Source, Transcript } from "./transcript";

interface StoredMessage {
  role: string;
  content: string;
  metadata?: { sources?: Source[]; status?: string } | null;
}

/**
 * One visitor's conversation: a chat created on the first question and remembered in localStorage
 * (reloaded with GET /chats/:id/messages), answers streamed over SSE, stopped with POST /chats/:id/stop.
 */
export class Conversation {
  chatId: string | null = null;
  private restoring: Promise<void> | null = null;

  constructor(
    private readonly cfg: WidgetConfig,
    private readonly client: ApiClient,
    private readonly transcript: Transcript,
  ) {}

  private key(t: Token) {
    return `kb-chat-widget:${this.cfg.api}:${t.kbId}`;
  }

  async forget() {
    this.chatId = null;
    const t = await this.client.token().catch(() => null);
    if (t) store.set(this.key(t), null);
  }

  async ensureChat(): Promise<string> {
    if (this.chatId) return this.chatId;
    const t = await this.client.token();
    const id = uuid();
    const res = await this.client.call("/chats", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id, tenant_id: t.tenantId, knowledge_base_id: t.kbId, model: this.cfg.model, agent_mode: this.cfg.agentMode }),
    });
    if (res.status !== 201) throw new Error(await errorOf(res));
    this.chatId = id;
    store.set(this.key(t), id);
    return id;
  }

  /** The saved conversation, shown once (the welcome when there is none). */
  restore(): Promise<void> {
    this.restoring ??= this.load().catch((e) => this.transcript.error(messageOf(e)));
    return this.restoring;
  }

  private async load() {
    const t = await this.client.token();
    const saved = store.get(this.key(t));
    if (!saved) return this.transcript.welcome(this.cfg.welcome);
    const path = `/chats/${encodeURIComponent(saved)}/messages?limit=200`;
    let res = await this.client.call(path);
    if (res.status === 404 || res.status === 403) {
      store.set(this.key(t), null);
      return this.transcript.welcome(this.cfg.welcome);
    }
    if (!res.ok) throw new Error(await errorOf(res));
    let j = (await res.json()) as { total: number; messages: StoredMessage[] };
    if (j.total > 200) {
      res = await this.client.call(`${path}&offset=${j.total - 200}`);
      if (res.ok) j = (await res.json()) as typeof j;
    }
    this.chatId = saved;
    if (!j.messages.length) this.transcript.welcome(this.cfg.welcome);
    for (const m of j.messages) this.show(m);
  }

  private show(m: StoredMessage) {
    if (m.role === "user") return this.transcript.addUser(m.content);
    if (m.role !== "assistant") return;
    const bot = this.transcript.addBot();
    const sources = m.metadata?.sources ?? [];
    this.transcript.renderSources(bot, sources);
    this.transcript.renderAnswer(bot, m.content, sources);
    if (m.metadata?.status === "partial") this.transcript.note(bot, "Stopped.");
  }

  /** Sends the question and opens the answer's stream; a saved chat that is gone or ended is replaced. */
  async send(question: string, signal: AbortSignal): Promise<Response> {
    const post = (id: string) =>
      this.client.call(`/chats/${id}/messages/stream`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({ content: question, model: this.cfg.model, agent_mode: this.cfg.agentMode }),
        signal,
      });
    let res = await post(await this.ensureChat());
    if (res.status === 404 || res.status === 409) {
      await this.forget();
      res = await post(await this.ensureChat());
    }
    if (!res.ok || !res.body) throw new Error(await errorOf(res));
    return res;
  }
}

/** The answer being streamed into one bot message: its text and sources as the events arrive. */
export class AnswerStream {
  text = "";
  sources: Source[] = [];
  finished = false;

  constructor(
    private readonly transcript: Transcript,
    readonly bot: BotMessage,
  ) {}

  read(body: ReadableStream<Uint8Array>) {
    return readEvents(body, (e) => this.onEvent(e));
  }

  private onEvent(e: StreamEvent) {
    const t = this.transcript;
    if (e.type === "sources") {
      this.sources = Array.isArray(e.sources) ? (e.sources as Source[]) : [];
      t.renderSources(this.bot, this.sources);
      t.renderAnswer(this.bot, this.text, this.sources);
    } else if (e.type === "final_response") {
      this.text = e.isComplete ? String(e.content) : this.text + String(e.content);
      t.renderAnswer(this.bot, this.text, this.sources);
    } else if (e.type === "done") {
      this.finished = true;
      if (e.status === "partial") t.note(this.bot, "Stopped.");
    } else if (e.type === "error") {
      this.finished = true;
      this.bot.el.classList.add("error");
      t.note(this.bot, e.message || "The answer could not be completed.");
    }
  }
}
