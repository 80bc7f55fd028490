import type { Database } from "../../db/client";
import type { Message, Source, TurnUsage } from "../../db/schema";
import type { Env } from "../../env";
import type { TokenUsage } from "../models/llm";
import { LOCAL_MODEL_ID, type ModelInfo } from "../models/registry";
import type { Toolbox } from "./toolbox";
import type { Capabilities, ToolSettings, TurnScope } from "../../contracts/tools";
import type { PromptExtras } from "./prompt";
import type { SourceLedger } from "./sources";
import type { ToolRunner } from "./tool-runner";
import type { Emit, StopReason } from "../../contracts/turn";
import type { RecalledAhead, SearchedAhead } from "../../contracts/chat-session";
import type { ChatCounters } from "../chats/answer-record";

export interface TurnDeps {
  db: Database;
  env: Env;
  /** The registered providers (src/capabilities.ts), handed in by the entry point that runs the turn. */
  capabilities: Capabilities;
  /** Where the turn's D1 session is (src/db/session.ts): `done` carries it after the final write. */
  bookmark?: () => string | null;
}

/**
 * One turn, as chat sends, streams, fast-query and agent runs describe it: where and for whom (what its
 * tools see, `TurnScope`), and what was asked.
 */
export interface TurnRequest extends Omit<TurnScope, "db" | "env" | "resources"> {
  model: ModelInfo;
  content: string;
  operation: "chat" | "fast_query" | "agent_run";
  /** What the toolbox may use. */
  tools: ToolSettings;
  /** Passages to retrieve in quick mode (fast-query's chunk_count). */
  chunkCount?: number;
  skills?: PromptExtras["skills"];
  attachments?: PromptExtras["attachments"];
  /** Extra system instructions (an agent's goal and instructions). */
  instructions?: string | null;
  /** Images of this message: stored keys (bytes go to vision models) and their URLs (metadata). */
  images?: Array<{ url: string; key: string; mediaType: string }>;
  /** The user message's id, when the caller fixed it (a chat's first turn, so a retried create finds it). */
  userMessageId?: string;
  /**
   * Where the chat's transcript ends, when the chat's Durable Object knows it for sure (the Worker read it in the
   * turn's one batch and no turn wrote since): the user message is then announced at once and written alongside
   * the turn's first steps instead of before them (src/services/answer/turn.ts).
   */
  known?: { nextSeq: number; count?: number; emptyHistory: boolean; recent?: Message[] };
  /** A quick search already run for this turn (src/services/chats/search-ahead.ts): the plan uses it if it would search the same. */
  searchedAhead?: Promise<SearchedAhead | undefined>;
  /** The memory recall's reads the Worker made ahead (src/services/chats/recall-ahead.ts): the memory provider's, if the same. */
  recalledAhead?: Promise<RecalledAhead | undefined>;
}

export interface TurnResult {
  userMessage: Message;
  assistantMessage: Message;
  usage: TurnUsage;
  status: Message["status"];
  sources: Source[];
  stopReason?: StopReason;
  error?: { code: string; message: string; retryable: boolean };
  /** The chat's messages since its summary, before this turn (its Durable Object keeps them for the next turn). */
  transcript?: Message[];
  /** The chat's message counters after the turn's final write (a create answers its chat without reading it again). */
  chat: ChatCounters;
}

/** The state a turn's stages share. */
export interface TurnContext {
  deps: TurnDeps;
  req: TurnRequest;
  scope: TurnScope;
  emit: Emit;
  signal: AbortSignal;
  toolbox: Toolbox;
  ledger: SourceLedger;
  runner: ToolRunner;
  /** Tokens of the answer's model calls (summaries are metered on their own). */
  used: TokenUsage;
  /** Metadata the context providers contribute to the answer (memoryUsed, memory_ids, ...). */
  contextMetadata: Record<string, unknown>;
  /** How many sources the last `sources` event carried (-1: none sent yet). */
  publishedSources: number;
  /** The user message's write (started now if it was waiting, turn-record.ts): the answer's checkpoints come after it. */
  userWritten: () => Promise<Message>;
  /** Writes the turn makes off its path (a deep turn's todo list): `done` waits until each has settled. */
  offPath: Array<() => Promise<void>>;
  /** The chat's messages since its summary, before this turn (set by the history stage). */
  transcript?: Message[];
}

export const isLocal = (m: ModelInfo) => m.id === LOCAL_MODEL_ID;

export const thought = (ctx: TurnContext, content: string) => ctx.emit({ type: "agent_thought", content });

/** Emits the `sources` event when it has not been sent yet or the list grew since. */
export async function publishSources(ctx: TurnContext): Promise<void> {
  if (ctx.publishedSources === ctx.ledger.size) return;
  ctx.publishedSources = ctx.ledger.size;
  await ctx.emit({ type: "sources", sources: ctx.ledger.all });
}
