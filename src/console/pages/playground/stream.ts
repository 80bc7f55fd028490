// Types only, from the generated schema (not the client), so that Worker-side tests can import this file.
import type { components } from "../../api/schema";

type Schemas = components["schemas"];

export type Source = Schemas["Source"];
export type Usage = Schemas["Usage"];

/** The chat stream's events (the API's "Events" section); fields the console reads. */
export type StreamEvent =
  | { type: "user_message"; message: Schemas["Message"] }
  | { type: "agent_thought"; content: string }
  | { type: "mcp_tool_call"; call_id: string; tool: string; arguments: unknown; server_id: string | null; connector_slug: string | null }
  | { type: "mcp_tool_result"; call_id: string; tool: string; result: unknown; is_error: boolean }
  | { type: "todo_update"; [k: string]: unknown }
  | { type: "data_preview"; sql: string; columns: string[]; rows: (string | number | null)[][]; row_count: number }
  | { type: "chart"; spec: Record<string, unknown> }
  | { type: "sources"; sources: Source[] }
  | { type: "final_response"; content: string; isComplete: boolean }
  | { type: "tokens"; usage: Usage }
  | { type: "done"; chat_id: string; message_id: string; usage: Usage; status: string; stop_reason?: string }
  | { type: "error"; message: string; code: string; retryable: boolean };

/**
 * Reads a text/event-stream body: one JSON payload per `data:` block; `ping` heartbeats and comments are
 * liveness only. Ends when the body ends (or the signal aborts the fetch).
 */
export async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (e: StreamEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const lines = block.split("\n");
      if (lines.some((l) => l === "event: ping")) continue;
      const data = lines
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n");
      if (!data) continue;
      try {
        onEvent(JSON.parse(data) as StreamEvent);
      } catch {
        /* not JSON: ignore */
      }
    }
  }
}

/** An answer being built from the events, or loaded from the chat's history. */
export interface Turn {
  id: string;
  role: "user" | "assistant";
  content: string;
  sources: Source[];
  steps: { kind: "thought" | "call" | "result"; text: string; isError?: boolean }[];
  status: "streaming" | "complete" | "partial" | "error";
  error?: string;
  usage?: Usage;
  /** Rows a query returned (`data_preview`) and charts of them (`chart`: a Vega-Lite spec), as streamed. */
  previews?: { sql: string; columns: string[]; rows: (string | number | null)[][]; row_count: number }[];
  charts?: Record<string, unknown>[];
}

/** Applies one event to the assistant turn (the spec's rules: append partials, replace with the complete text). */
export function applyEvent(t: Turn, e: StreamEvent): Turn {
  switch (e.type) {
    case "agent_thought":
      return { ...t, steps: [...t.steps, { kind: "thought", text: e.content }] };
    case "mcp_tool_call":
      return { ...t, steps: [...t.steps, { kind: "call", text: `${e.tool}(${JSON.stringify(e.arguments ?? {}).slice(0, 200)})` }] };
    case "mcp_tool_result":
      return { ...t, steps: [...t.steps, { kind: "result", text: `${e.tool} ${e.is_error ? "failed" : "answered"}: ${JSON.stringify(e.result ?? "").slice(0, 300)}`, isError: e.is_error }] };
    case "sources":
      return { ...t, sources: e.sources };
    case "data_preview":
      return { ...t, previews: [...(t.previews ?? []), { sql: e.sql, columns: e.columns, rows: e.rows, row_count: e.row_count }] };
    case "chart":
      return { ...t, charts: [...(t.charts ?? []), e.spec] };
    case "final_response":
      return { ...t, content: e.isComplete ? e.content : t.content + e.content };
    case "tokens":
      return { ...t, usage: e.usage };
    case "done":
      return { ...t, id: e.message_id, status: e.status === "partial" ? "partial" : "complete", usage: e.usage };
    case "error":
      return { ...t, status: "error", error: e.message };
    default:
      return t;
  }
}

export function turnFromMessage(m: Schemas["Message"]): Turn {
  const md = m.metadata;
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    sources: md.sources ?? [],
    steps: (md.tool_calls ?? []).map((c) => ({ kind: "call" as const, text: `${c.tool}${c.is_error ? " (failed)" : ""}`, isError: c.is_error })),
    status: md.status === "error" ? "error" : md.status === "partial" ? "partial" : "complete",
    error: md.error?.message,
    usage: md.usage ?? undefined,
  };
}
