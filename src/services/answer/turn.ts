import type { ModelMessage } from "ai";
import type { Database } from "../../db/client";
import type { Chat, ChatTodo, KnowledgeBase, Message, Source, TodoItem } from "../../db/schema";
import type { Env } from "../../env";
import { config } from "../../lib/config";
import { newId } from "../../lib/ids";
import { estimateTokens, terms } from "../../lib/text";
import { nowIso } from "../../lib/time";
import { recordUsage, type Actor } from "../billing/metering";
import { appendMessage, publicMessage, setTodo } from "../chats/chats";
import { loadImages } from "../chats/images";
import { complete, ProviderError, researchWithTools, streamAnswer, type TokenUsage } from "../models/llm";
import { LOCAL_MODEL_ID, type ModelInfo } from "../models/registry";
import { extractiveAnswer, NO_ANSWER, renderExtractive, selectSentences } from "./extractive";
import { extractiveSummary, loadHistory, type History } from "./history";
import { decompose } from "./plan";
import { sanitizeCitations, systemPrompt, type PromptExtras } from "./prompt";
import { passagesToSources, TurnAbort, type Emit, type Passage, type Retriever, type StopReason, type UsageView } from "./types";
import { webSearch, webSearchConfigured } from "./websearch";

/**
 * THE answer pipeline, shared by JSON sends, streams, fast-query and (later)
 * agent runs: persist the user message, fold long history into a summary,
 * retrieve (one pass in quick mode; a plan with several passes in deep mode),
 * assemble the prompt from the knowledge base's prompt fields, call the model,
 * keep citations consistent with the sources, meter the turn, persist the
 * answer, and emit the events in the decided order.
 */

export const QUICK_PASSAGES = 6;
export const DEEP_PASSAGES_PER_PART = 5;
export const MAX_SOURCES = 12;

export interface TurnDeps {
  db: Database;
  env: Env;
  retriever: Retriever;
}

export interface TurnRequest {
  chat: Chat;
  kb: KnowledgeBase;
  model: ModelInfo;
  content: string;
  mode: "quick" | "deep";
  websearch: boolean;
  actor: Actor;
  operation: "chat" | "fast_query" | "agent_run";
  /** Passages to retrieve in quick mode (fast-query's chunk_count). */
  chunkCount?: number;
  skills?: PromptExtras["skills"];
  attachments?: PromptExtras["attachments"];
  /** Images of this message: stored keys (bytes go to vision models) and their URLs (metadata). */
  images?: Array<{ url: string; key: string; mediaType: string }>;
}

export interface TurnResult {
  userMessage: Message;
  assistantMessage: Message;
  usage: UsageView;
  status: Message["status"];
  sources: Source[];
  stopReason?: StopReason;
  error?: { code: string; message: string; retryable: boolean };
}

const isLocal = (m: ModelInfo) => m.id === LOCAL_MODEL_ID;
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

function dedupePassages(passages: Passage[]): Passage[] {
  const seen = new Set<string>();
  const out: Passage[] = [];
  for (const p of passages) {
    const key = p.chunk_id ?? `${p.url}|${p.text.slice(0, 80)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  return out;
}

/** Short follow-ups ("and the price?") are searched together with the previous question. */
function retrievalQuery(content: string, history: History): string {
  if (terms(content).length >= 3) return content;
  const previous = [...history.recent].reverse().find((m) => m.role === "user");
  return previous ? `${previous.content} ${content}` : content;
}

function toModelMessages(history: History, content: string, images: Array<{ data: Uint8Array; mediaType: string }> = []): ModelMessage[] {
  const msgs: ModelMessage[] = history.recent
    .filter((m) => m.content.trim())
    .map((m) => ({ role: m.role, content: m.content }) as ModelMessage);
  if (images.length) {
    msgs.push({
      role: "user",
      content: [{ type: "text", text: content }, ...images.map((img) => ({ type: "image" as const, image: img.data, mediaType: img.mediaType }))],
    });
  } else {
    msgs.push({ role: "user", content });
  }
  return msgs;
}

export async function runTurn(deps: TurnDeps, req: TurnRequest, emit: Emit, signal: AbortSignal): Promise<TurnResult> {
  const { db, env } = deps;
  const { chat, kb, model } = req;
  const cfg = config(env);

  const userMessage = await appendMessage(db, chat.id, {
    role: "user",
    content: req.content,
    metadata: {
      ...(req.images?.length ? { imageUrls: req.images.map((i) => i.url) } : {}),
      ...(req.attachments?.length ? { attachedArtifactIds: req.attachments.map((a) => a.id) } : {}),
    },
  });
  await emit({ type: "user_message", message: publicMessage(userMessage) });

  const assistantId = newId("msg");
  const used: TokenUsage = { input_tokens: 0, output_tokens: 0 };
  let content = "";
  let sources: Source[] = [];
  let status: Message["status"] = "complete";
  let stopReason: StopReason | undefined;
  let error: TurnResult["error"];

  const thought = (text: string) => emit({ type: "agent_thought", content: text });

  try {
    // ---- History (rolling summary for long conversations) -------------------
    const history = await loadHistory(db, chat, {
      contextWindow: model.context_window,
      currentSeq: userMessage.seq,
      summarize: async (previous, fold) => {
        if (isLocal(model)) {
          const text = extractiveSummary(previous, fold);
          const input = fold.reduce((s, m) => s + Math.ceil(m.content.length / 4), 0);
          return { text, usage: { input_tokens: input, output_tokens: Math.ceil(text.length / 4) }, model: model.id };
        }
        const r = await complete(env, model, {
          system:
            "You maintain a running summary of a conversation between a user and an assistant. Keep facts, names, " +
            "numbers, decisions and open questions; drop pleasantries. At most 300 words.",
          prompt: `Previous summary:\n${previous ?? "(none)"}\n\nNew messages:\n${fold
            .map((m) => `${m.role}: ${m.content}`)
            .join("\n\n")}\n\nWrite the updated summary.`,
          signal,
        });
        return { text: r.text.trim(), usage: r.usage, model: model.id };
      },
    });
    if (history.summarized) {
      await recordUsage(db, {
        organizationId: chat.organizationId,
        tenantId: chat.tenantId,
        operation: "summary",
        model: history.summarized.model,
        pricing: model.pricing,
        usage: history.summarized.usage,
        actor: req.actor,
        chatId: chat.id,
        messageId: userMessage.id,
        idempotencyKey: `summary:${userMessage.id}`,
      });
      await thought(`Summarized ${history.summarized.messages} earlier messages to keep the conversation within the model's context.`);
    }
    signal.throwIfAborted();

    // ---- Retrieval ------------------------------------------------------------
    const query = retrievalQuery(req.content, history);
    let passages: Passage[] = [];
    let parts: string[] = [req.content];
    let finishTodo: (() => Promise<void>) | null = null;
    if (req.mode === "quick") {
      passages = await deps.retriever(query, req.chunkCount ?? QUICK_PASSAGES, signal);
    } else {
      parts = decompose(req.content);
      if (!parts.length) parts = [req.content];
      const items: TodoItem[] = [
        ...parts.map((p, i) => ({ id: `t${i + 1}`, content: `Search the knowledge base: ${p}`, status: "pending" as const })),
        { id: `t${parts.length + 1}`, content: "Write the answer with citations", status: "pending" },
      ];
      const todo: ChatTodo = { items, updated_at: nowIso() };
      const publishTodo = async () => {
        todo.updated_at = nowIso();
        await setTodo(db, chat.id, todo);
        await emit({ type: "todo_update", todo: structuredClone(todo) });
      };
      await thought(parts.length > 1 ? `Breaking the question into ${parts.length} parts.` : "Planning the research.");
      await publishTodo();
      for (let i = 0; i < parts.length; i++) {
        items[i].status = "in_progress";
        await publishTodo();
        const partQuery = parts.length > 1 ? parts[i] : query;
        await thought(`Searching the knowledge base for "${parts[i]}".`);
        const found = await deps.retriever(partQuery, DEEP_PASSAGES_PER_PART, signal);
        const docs = new Set(found.map((p) => p.document_id ?? p.url)).size;
        await thought(`Found ${found.length} passage${found.length === 1 ? "" : "s"} in ${docs} document${docs === 1 ? "" : "s"}.`);
        passages.push(...found);
        items[i].status = "completed";
        await publishTodo();
      }
      if (!isLocal(model)) {
        // With a model that calls tools, let it search further before answering.
        const collected: Passage[] = [];
        const researchUsage = await researchWithTools(env, model, {
          system:
            "You are researching a question against a knowledge base before it is answered. Call search_knowledge_base " +
            "with focused queries for anything the passages found so far do not cover. When you have enough, reply DONE.",
          prompt: `Question: ${req.content}\n\nPassages found so far:\n${passages
            .map((p, i) => `(${i + 1}) ${p.filename ?? p.url}: ${p.text.slice(0, 300)}`)
            .join("\n")}`,
          signal,
          maxSteps: 3,
          search: async (q) => {
            await thought(`Searching the knowledge base for "${q}".`);
            const more = await deps.retriever(q, DEEP_PASSAGES_PER_PART, signal);
            collected.push(...more);
            return more.length
              ? more.map((p, i) => `(${i + 1}) ${p.filename ?? p.url}: ${p.text.slice(0, 400)}`).join("\n")
              : "No passages found.";
          },
        });
        used.input_tokens += researchUsage.input_tokens;
        used.output_tokens += researchUsage.output_tokens;
        passages.push(...collected);
      }
      items[items.length - 1].status = "in_progress";
      await publishTodo();
      // The list stays persisted after the turn (GET /chats/:id/todo); its last step is
      // marked done in storage only, since no todo_update may follow the answer.
      finishTodo = async () => {
        items[items.length - 1].status = "completed";
        todo.updated_at = nowIso();
        await setTodo(db, chat.id, todo);
      };
    }

    if (req.websearch) {
      if (webSearchConfigured(env)) {
        await thought(`Searching the web for "${req.content.slice(0, 120)}".`);
        try {
          passages.push(...(await webSearch(env, req.content, 3, signal)));
        } catch (e) {
          if (signal.aborted) throw signal.reason;
          await thought(`Web search failed (${(e as Error).message}); answering from the knowledge base only.`);
        }
      } else {
        await thought("Web search is not configured on this service; answering from the knowledge base only.");
      }
    }

    passages = dedupePassages(passages).slice(0, MAX_SOURCES);
    if (isLocal(model) && req.attachments?.length) {
      // local-extractive cannot read a prompt: attached artifacts become citable passages.
      passages.unshift(
        ...req.attachments.map((a) => ({
          document_id: null,
          filename: `Artifact: ${a.title}`,
          chunk_id: null,
          text: a.content.slice(0, 20_000),
          score: 1,
          page: null,
          url: null,
        })),
      );
    }
    sources = passagesToSources(passages);
    await emit({ type: "sources", sources });

    // ---- Generation -----------------------------------------------------------
    const onDelta = async (text: string) => {
      content += text;
      await emit({ type: "final_response", content: text, isComplete: false });
    };

    if (isLocal(model)) {
      let answer: string;
      const extractivePassages = sources.map((s) => ({ index: s.index, text: s.text }));
      if (req.mode === "deep" && parts.length > 1) {
        // One short section per part of the question.
        const sections = parts.map((part) => {
          const { picks, empty } = selectSentences(part, extractivePassages, { maxSentences: 3 });
          return `**${part}**\n${empty ? NO_ANSWER : renderExtractive(picks)}`;
        });
        answer = sections.join("\n\n");
        used.input_tokens += estimateTokens(req.content) + extractivePassages.reduce((n, p) => n + estimateTokens(p.text), 0);
      } else {
        const r = extractiveAnswer(req.content, extractivePassages, { maxSentences: req.mode === "deep" ? 6 : 4 });
        answer = r.content;
        used.input_tokens += r.usage.input_tokens;
      }
      // Stream it word by word, as a generating model would.
      const pieces = answer.match(/\S+\s*/g) ?? [];
      for (const piece of pieces) {
        signal.throwIfAborted();
        if (cfg.localModelTokenDelayMs > 0) await sleep(cfg.localModelTokenDelayMs, signal);
        await onDelta(piece);
      }
      used.output_tokens += Math.ceil(content.length / 4);
    } else {
      const system = systemPrompt(kb, sources, {
        mode: req.mode,
        skills: req.skills,
        attachments: req.attachments,
        summary: history.summary,
      });
      const r = await streamAnswer(env, model, {
        system,
        messages: toModelMessages(history, req.content, req.images?.length ? await loadImages(env, req.images) : []),
        signal,
        onDelta,
      });
      used.input_tokens += r.usage.input_tokens;
      used.output_tokens += r.usage.output_tokens;
    }
    content = sanitizeCitations(content, sources.length);
    await emit({ type: "final_response", content, isComplete: true });
    if (finishTodo) await finishTodo();
  } catch (e) {
    const reason = signal.aborted ? signal.reason : e;
    if (reason instanceof TurnAbort) {
      status = "partial";
      stopReason = reason.reason;
    } else if (e instanceof ProviderError) {
      status = "error";
      content = e.partialText || content;
      used.input_tokens += e.usage.input_tokens;
      used.output_tokens += e.usage.output_tokens;
      error = { code: "model_error", message: e.message, retryable: e.retryable };
    } else {
      console.error(`turn failed in chat ${chat.id}:`, e);
      status = "error";
      error = { code: "internal_error", message: "The answer could not be completed", retryable: true };
    }
    if (!isLocal(model) && status === "partial") {
      // A stopped provider stream: charge what was generated so far.
      used.output_tokens = Math.max(used.output_tokens, Math.ceil(content.length / 4));
    }
    if (isLocal(model) && used.output_tokens === 0) used.output_tokens = Math.ceil(content.length / 4);
  }

  // ---- Metering and persistence (also for partial and failed turns) ----------
  const recorded = await recordUsage(db, {
    organizationId: chat.organizationId,
    tenantId: chat.tenantId,
    operation: req.operation,
    model: model.id,
    pricing: model.pricing,
    usage: used,
    actor: req.actor,
    chatId: chat.id,
    messageId: assistantId,
    idempotencyKey: `turn:${assistantId}`,
  });
  const usage: UsageView = {
    input_tokens: recorded.input_tokens,
    output_tokens: recorded.output_tokens,
    total_tokens: recorded.total_tokens,
    credits: recorded.credits,
  };
  const assistantMessage = await appendMessage(db, chat.id, {
    id: assistantId,
    role: "assistant",
    content,
    status,
    metadata: {
      sources,
      usage,
      model: model.id,
      memoryUsed: false,
      ...(error ? { error: { code: error.code, message: error.message } } : {}),
      ...(stopReason ? { stop_reason: stopReason } : {}),
    },
  });

  if (status === "error") {
    await emit({ type: "error", message: error!.message, code: error!.code, retryable: error!.retryable, chat_id: chat.id, message_id: assistantId });
  } else {
    await emit({ type: "tokens", usage });
    await emit({
      type: "done",
      chat_id: chat.id,
      message_id: assistantId,
      usage,
      status,
      ...(stopReason ? { stop_reason: stopReason } : {}),
    });
  }
  return { userMessage, assistantMessage, usage, status, sources, stopReason, error };
}
