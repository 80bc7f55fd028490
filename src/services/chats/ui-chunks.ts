import type { UIMessageChunk } from "ai";
import type { Source } from "../../db/schema";
import type { TurnEvent } from "../../contracts/turn";

/**
 * A chat turn's events as AI SDK UI message stream chunks (protocol v1, what `useChat` and
 * `readUIMessageStream` read): `start` (with the chat and user message ids), the answer as one
 * text part, each cited source once as `source-url` (web pages) or `source-document` (documents,
 * memories; `sourceId` is the n of [n]), the turn's activity as `data-*` parts — `data-thought`,
 * `data-todo` (one part, replaced), `data-tool` (one part per call, its result replacing the call),
 * `data-preview`, `data-chart` — and `finish` with the assistant message id, usage and status, or
 * `error`. A stopped, replaced or abandoned turn finishes with `interrupted`.
 */
export class UiChunkMapper {
  private textOpen = false;
  private sent = "";
  private readonly sourcesSent = new Set<number>();
  private readonly toolCalls = new Map<string, Record<string, unknown>>();
  private seq = 0;
  private readonly textId = "text-1";
  ended = false;

  map(ev: TurnEvent): UIMessageChunk[] {
    switch (ev.type) {
      case "user_message":
        return [{ type: "start", messageMetadata: { chat_id: ev.message.chat_id, user_message_id: ev.message.id, ...(ev.run_id ? { run_id: ev.run_id } : {}) } }];
      case "agent_thought":
        return [{ type: "data-thought", id: `thought-${++this.seq}`, data: { content: ev.content } }];
      case "todo_update":
        return [{ type: "data-todo", id: "todo", data: ev.todo }];
      case "mcp_tool_call":
      case "mcp_tool_result":
        return [this.tool(ev)];
      case "data_preview":
      case "chart": {
        const { type, ...data } = ev;
        return [{ type: type === "chart" ? "data-chart" : "data-preview", id: `${type}-${++this.seq}`, data }];
      }
      case "sources":
        return this.sources(ev.sources);
      case "final_response":
        return this.text(ev.content, ev.isComplete);
      case "done":
        this.ended = true;
        return [
          ...this.closeText(),
          {
            type: "finish",
            finishReason: ev.status === "complete" ? "stop" : "interrupted",
            messageMetadata: { chat_id: ev.chat_id, message_id: ev.message_id, usage: ev.usage, status: ev.status, ...(ev.stop_reason ? { stop_reason: ev.stop_reason } : {}) },
          },
        ];
      case "error":
        this.ended = true;
        return [
          ...this.closeText(),
          { type: "message-metadata", messageMetadata: { chat_id: ev.chat_id, message_id: ev.message_id, status: "error", error: { code: ev.code, retryable: ev.retryable } } },
          { type: "error", errorText: `${ev.code}: ${ev.message}` },
        ];
      default:
        return [];
    }
  }

  /** The stream ended without `done` or `error` (the turn's stream broke). */
  broken(): UIMessageChunk[] {
    this.ended = true;
    return [...this.closeText(), { type: "error", errorText: "internal_error: the answer stream ended early" }];
  }

  private tool(ev: Extract<TurnEvent, { type: "mcp_tool_call" | "mcp_tool_result" }>): UIMessageChunk {
    const { type, ...fields } = ev;
    const data = { ...this.toolCalls.get(ev.call_id), ...fields, state: type === "mcp_tool_call" ? "call" : "result" };
    this.toolCalls.set(ev.call_id, data);
    return { type: "data-tool", id: ev.call_id, data };
  }

  /** Partial answers are deltas; the complete answer adds only what they did not carry. */
  private text(content: string, complete: boolean): UIMessageChunk[] {
    const delta = complete ? (content.startsWith(this.sent) ? content.slice(this.sent.length) : "") : content;
    const out: UIMessageChunk[] = [];
    if (delta && !this.textOpen) {
      this.textOpen = true;
      out.push({ type: "text-start", id: this.textId });
    }
    if (delta) {
      this.sent += delta;
      out.push({ type: "text-delta", id: this.textId, delta });
    }
    if (complete) out.push(...this.closeText());
    return out;
  }

  private closeText(): UIMessageChunk[] {
    if (!this.textOpen) return [];
    this.textOpen = false;
    return [{ type: "text-end", id: this.textId }];
  }

  private sources(sources: Source[]): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    for (const s of sources) {
      if (this.sourcesSent.has(s.index)) continue;
      this.sourcesSent.add(s.index);
      out.push(sourceChunk(s));
    }
    return out;
  }
}

const MEDIA_TYPES: Record<string, string> = {
  pdf: "application/pdf",
  md: "text/markdown",
  markdown: "text/markdown",
  txt: "text/plain",
  html: "text/html",
  htm: "text/html",
  csv: "text/csv",
  json: "application/json",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

const mediaTypeOf = (filename: string | null) => MEDIA_TYPES[filename?.split(".").pop()?.toLowerCase() ?? ""] ?? "text/plain";

/** A cited source: a web page (`url`) as source-url, anything else as source-document; the passage in providerMetadata.kb. */
function sourceChunk(s: Source): UIMessageChunk {
  const kb = {
    index: s.index,
    document_id: s.document_id,
    chunk_id: s.chunk_id,
    page: s.page,
    score: s.score,
    text: s.text,
    ...(s.memory_id ? { memory_id: s.memory_id } : {}),
  };
  const sourceId = String(s.index);
  if (s.url) return { type: "source-url", sourceId, url: s.url, title: s.filename ?? s.url, providerMetadata: { kb } };
  return {
    type: "source-document",
    sourceId,
    mediaType: mediaTypeOf(s.filename),
    title: s.filename ?? `Source ${s.index}`,
    ...(s.filename ? { filename: s.filename } : {}),
    providerMetadata: { kb },
  };
}
