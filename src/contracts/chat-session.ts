import type { AgentRun, Chat, KnowledgeBase, Message, Source, TurnUsage } from "../db/schema";
import type { PublicMessage } from "./messages";
import type { Actor, ToolSettings, TurnScope } from "./tools";
import type { AttachedArtifact, Passage } from "./turn";
import type { RecalledAhead } from "./memory";

export type { RecalledAhead };

/**
 * The chat Durable Object's protocol (src/durable/chat-session.ts): what the Worker sends it to run a turn
 * (POST /turn) and what a JSON turn answers. The Worker authorizes and validates every request before it
 * gets there.
 */
export interface TurnCommand {
  chatId: string;
  /** The chat's knowledge base as the Worker loaded and checked it (saves the Durable Object a query). */
  kb?: KnowledgeBase;
  content: string;
  modelId: string;
  mode: "quick" | "deep";
  websearch: boolean;
  actor: Actor;
  operation: "chat" | "fast_query" | "agent_run";
  stream: boolean;
  /** What the turn's toolbox may use (src/services/tools). Absent = nothing beyond knowledge-base search. */
  toolSettings?: ToolSettings;
  /** The end user the turn acts for (`user:…`, `ext:…`, `key:…`): memories and connections are theirs. */
  subject?: string;
  /** Extra system instructions (an agent's goal and instructions, `always` skills are in `skills`). */
  instructions?: string | null;
  /** The agent run this turn belongs to (agent runs only). */
  runId?: string | null;
  /** 1 inside a delegate: it may not delegate further. */
  depth?: number;
  chunkCount?: number;
  skills?: Array<{ name: string; body: string }>;
  attachments?: AttachedArtifact[];
  /** Images stored with the first message (R2 keys, for the model; URLs, for the record). */
  images?: Array<{ url: string; key: string; mediaType: string }>;
  /** The user message's id, when fixed by the caller (a chat's first turn: a retried create finds it). */
  userMessageId?: string;
  /** The chat and where its transcript ends, as the Worker read them in the turn's one batch (src/services/chats/turn-reads.ts). */
  chat?: Chat;
  transcript?: { maxSeq: number; count: number };
  /** Whether the knowledge base has a data file (read in the same batch; saves the toolbox a query). */
  tabular?: boolean;
  /** The tenant's memory settings (read in the same batch; saves the turn's memory its queries). */
  memorySettings?: TurnScope["memorySettings"];
  /**
   * The search the Worker started alongside the turn's read (src/services/chats/search-ahead.ts), used if the
   * pipeline would search the same. Not part of the command's JSON: the turn starts without waiting for it, and
   * it follows as the body's second line when done (src/services/chats/session.ts).
   */
  searchedAhead?: Promise<SearchedAhead | undefined>;
  /**
   * The memory recall's reads the Worker made alongside the turn's read (src/services/chats/recall-ahead.ts), used
   * if the turn's memory space and recall are the same. Sent like `searchedAhead`, on the body's second line.
   */
  recalledAhead?: Promise<RecalledAhead | undefined>;
  /** On the command's JSON line: a recall ahead was started, and follows on the second line (the turn waits for it). */
  recalling?: boolean;
  /** Where the Worker's D1 session was: the turn's session starts there (src/db/session.ts); absent: the primary. */
  bookmark?: string | null;
}

/** What follows the command on the second line of the body (`{}`: nothing). */
export interface LateTurnParts {
  searchedAhead?: SearchedAhead;
  recalledAhead?: RecalledAhead;
}

/** A JSON turn's answer (ChatSession.turnJson): the outcome and the turn's D1 bookmark; null when the chat is gone. */
export type TurnJsonResult = { outcome: TurnOutcome; bookmark: string | null } | null;


export interface SearchedAhead {
  query: string;
  limit: number;
  passages: Passage[];
}

export interface TurnOutcome {
  user_message: PublicMessage;
  assistant_message: PublicMessage;
  usage: TurnUsage;
  status: Message["status"];
  sources: Source[];
  error?: { code: string; message: string; retryable: boolean };
  /** An agent run's turn: the run as the turn's after-turn hook finished it (absent when the hook did not). */
  run?: AgentRun;
  /** The chat's message counters after the turn's final write. */
  chat: { message_count: number; last_message_at: string | null };
}
