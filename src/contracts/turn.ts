import type { ArtifactType, ChatTodo, FoundText, Message, Source, TurnUsage } from "../db/schema";
import type { PublicMessage } from "./messages";

/** An artifact attached to a turn: its content is given to the model as context (src/services/artifacts/attached.ts). */
export interface AttachedArtifact {
  id: string;
  title: string;
  type: ArtifactType;
  content: string;
}

/** A retrieved passage, as the retrieval layer returns it. */
export interface Passage extends FoundText {
  heading?: string | null;
  url?: string | null;
  /** Set for a recalled memory (document_id null, filename "Memory"). */
  memory_id?: string | null;
}

export type Retriever = (query: string, limit: number, signal?: AbortSignal) => Promise<Passage[]>;

/**
 * Events of a turn, in the order the specification and decisions fix:
 * user_message, then any of agent_thought / todo_update / mcp_tool_call /
 * mcp_tool_result / data_preview / chart, then sources, partial
 * final_response events, one complete final_response, tokens, done.
 * error ends a stream.
 */
export type TurnEvent =
  | { type: "user_message"; message: PublicMessage; run_id?: string }
  | { type: "agent_thought"; content: string }
  | { type: "todo_update"; todo: ChatTodo }
  | { type: "data_preview"; [k: string]: unknown }
  | { type: "mcp_tool_call"; call_id: string; server_id: string | null; connector_slug: string | null; tool: string; arguments: unknown }
  | {
      type: "mcp_tool_result";
      call_id: string;
      server_id: string | null;
      connector_slug: string | null;
      tool: string;
      result: unknown;
      is_error: boolean;
    }
  | { type: "chart"; [k: string]: unknown }
  | { type: "sources"; sources: Source[] }
  | { type: "final_response"; content: string; isComplete: boolean }
  | { type: "tokens"; usage: TurnUsage }
  | { type: "done"; chat_id: string; message_id: string; usage: TurnUsage; status: Message["status"]; stop_reason?: string; [k: string]: unknown }
  | { type: "error"; message: string; code: string; retryable: boolean; chat_id?: string; message_id?: string };

export type Emit = (event: TurnEvent) => void | Promise<void>;

/** Why a turn was aborted (the AbortSignal's reason). */
export type StopReason = "stopped" | "replaced" | "disconnected";

export class TurnAbort extends Error {
  constructor(readonly reason: StopReason) {
    super(`turn ${reason}`);
  }
}

export function passagesToSources(passages: Passage[], offset = 0): Source[] {
  return passages.map((p, i) => ({
    index: offset + i + 1,
    document_id: p.document_id,
    filename: p.filename,
    chunk_id: p.chunk_id,
    text: p.text,
    score: Math.round(p.score * 10_000) / 10_000,
    page: p.page ?? null,
    url: p.url ?? null,
    ...(p.memory_id ? { memory_id: p.memory_id } : {}),
  }));
}
