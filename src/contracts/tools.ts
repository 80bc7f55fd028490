import type { JSONSchema7 } from "ai";
import type { Database } from "../db/client";
import type { Chat, KnowledgeBase, MemoryMode, MemoryRetention, Message } from "../db/schema";
import type { Env } from "../env";
import type { Emit, Passage } from "./turn";
import type { TurnResources } from "./resources";
import type { RecalledAhead } from "./memory";

/** Who is charged for a turn's work: an API key or a user (src/services/billing/metering.ts). */
export interface Actor {
  apiKeyId?: string | null;
  userId?: string | null;
}

/** A provider tool name: letters, digits, `_` and `-`, at most 64 characters (the OpenAI function-name rule). */
export const TOOL_NAME_MAX = 64;

export function safeToolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, TOOL_NAME_MAX) || "tool";
}

/** A server or app name as it appears in a tool name: lower case `[a-z0-9_]`, at most 24 characters. */
export function nameSlug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 24) || "server";
}

/**
 * THE toolbox contract (API-DECISIONS "One agent loop with a toolbox"). A turn
 * — a chat send or stream, a fast-query, an agent run — assembles its toolbox
 * from the providers registered in src/capabilities.ts; a tool-calling model gets it
 * through the AI SDK's tool loop, and `local-extractive` drives the same tools
 * with a deterministic plan (each tool's `plan`). Adding a tool = one file that
 * implements ToolProvider + one line in src/capabilities.ts.
 */

/** What a tool's results are. */
export type ToolResultKind = "passages" | "data" | "chart" | "text";

/** Where a tool comes from. MCP and connector tools emit mcp_tool_call / mcp_tool_result; the others agent_thought. */
export type ToolOrigin =
  | { type: "internal" }
  | { type: "mcp"; serverId: string; tool: string }
  | { type: "connector"; slug: string; tool: string };

/** What the turn may use, from the chat's settings and the turn's body, or an agent's pinned snapshot. */
export interface ToolSettings {
  websearch: boolean;
  /** MCP registrations enabled for the chat (or the agent's mcp_server_ids). */
  mcpServerIds: string[];
  /** Connected apps (deep mode), owned by the turn's subject. */
  connectorSlugs: string[];
  /** Delegates: our agent ids (`agt_…`) and A2A registration ids (`a2a_…`), told apart by prefix. */
  delegateIds: string[];
  /** Skills attached in `auto` mode: only name and description are shown until `load_skill`. */
  autoSkills: Array<{ id: string; name: string; description: string; body: string }>;
}

export const emptyToolSettings = (): ToolSettings => ({
  websearch: false,
  mcpServerIds: [],
  connectorSlugs: [],
  delegateIds: [],
  autoSkills: [],
});

/** The turn a toolbox is assembled for. Everything a tool may touch is reachable from here — and nothing else. */
export interface TurnScope {
  db: Database;
  env: Env;
  chat: Chat;
  kb: KnowledgeBase;
  actor: Actor;
  /**
   * The end user the turn acts for: `user:<user id>`, `ext:<external_subject_id>`
   * or `key:<api key id>`. Memories and connections are looked up by it, never
   * by anything the model says.
   */
  subject: string;
  mode: "quick" | "deep";
  /** The caller reads a stream (delegates to A2A agents may stream too). */
  streaming: boolean;
  /** The agent run this turn belongs to, when it is one. */
  runId: string | null;
  /** 0 for a turn a caller started; 1 inside a delegate (which may not delegate further). */
  depth: number;
  /** What the turn's tools share while it runs (closed when its tools are done); absent outside a turn. */
  resources?: TurnResources;
  /** Whether the knowledge base has a data file, when read with the turn's one batch (absent: the sql provider asks). */
  tabular?: boolean;
  /** The id of the user message this turn answers, once the turn started (its write may not have landed yet). */
  questionMessageId?: string;
  /** The tenant's memory settings, when read with the turn's one batch (absent: the memory provider asks). */
  memorySettings?: { mode: MemoryMode; retention: MemoryRetention };
  /** The memory recall's reads, made by the Worker ahead of the turn (src/services/chats/recall-ahead.ts), when it did. */
  recalledAhead?: Promise<RecalledAhead | undefined>;
}

export interface ToolCallContext {
  /** Aborted when the turn is stopped, replaced or disconnected, or the per-call budget runs out. */
  signal: AbortSignal;
  scope: TurnScope;
  /** For agent_thought, data_preview and chart events the tool itself emits. */
  emit: Emit;
  callId: string;
}

export interface ToolOutput {
  /** What the model reads. Passages are rendered by the loop with their citation numbers: do not repeat them here. */
  text?: string;
  /** Citable passages: each becomes a source, numbered in the order they arrive. */
  passages?: Passage[];
  /** Rows a query returned: emitted as a data_preview event (rows at most 20). */
  data?: { sql: string; columns: string[]; rows: unknown[][]; row_count: number };
  /** A validated Vega-Lite v5 spec with inline data: emitted as a chart event. */
  chart?: { spec: Record<string, unknown> };
  /** The call failed: the model sees `text` as the error, the turn continues. */
  isError?: boolean;
  /** A delegate that answered (message metadata `delegatedAgentIds`). */
  delegatedAgentId?: string;
}

export interface Tool {
  /** Namespaced and stable: kb__search, mcp__<server>__<tool>, app__<slug>__<tool>, sql__query, delegate__<id>, load_skill. */
  name: string;
  description: string;
  /** JSON schema of the input object. */
  inputSchema: JSONSchema7;
  kind: ToolResultKind;
  origin: ToolOrigin;
  /** This tool's time budget per call, when it differs from the default 30 s (a delegate runs a whole turn). */
  timeoutMs?: number;
  /**
   * The deterministic plan of `local-extractive`: the input to call this tool
   * with once for `question`, or null to leave it out (MCP tools always are).
   */
  plan?: (question: string, scope: TurnScope) => Record<string, unknown> | null;
  execute(input: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolOutput>;
}

/** Checks made before a turn starts (and before any credit is spent): 400 naming the field when unresolvable. */
export interface ValidationScope {
  db: Database;
  env: Env;
  chat: Pick<Chat, "id" | "organizationId" | "environmentId" | "tenantId" | "knowledgeBaseId">;
  subject: string;
  mode: "quick" | "deep";
  depth: number;
}

/** A source of tools, registered once in src/capabilities.ts. */
export interface ToolProvider {
  name: string;
  /** Refuses settings this provider cannot honour (unknown ids, unconnected apps, ...) with a 400. */
  validate?(scope: ValidationScope, settings: ToolSettings): Promise<void>;
  /** The tools this turn gets from the provider ([] when it does not apply). Must not throw for a missing remote: return an error tool result at call time instead. */
  tools(scope: TurnScope, settings: ToolSettings): Promise<Tool[]>;
}

/** Runs before the plan: passages put into the prompt (and citable for local-extractive), e.g. memory recall. */
export interface ContextProvider {
  name: string;
  gather(
    scope: TurnScope,
    question: string,
    signal: AbortSignal,
  ): Promise<{ passages: Passage[]; thought?: string; metadata?: Record<string, unknown> } | null>;
}

/**
 * Runs after the answer is persisted, before `tokens`/`done` (also for partial and failed turns): e.g. memory
 * extraction, finishing an agent run. `done` fields it returns are added to the `done` event (an agent run adds
 * `run`). A hook that throws is logged and ignored: it never fails the turn.
 */
export interface AfterTurnHook {
  name: string;
  /**
   * Optional: statements for the answer's final write (one D1 batch, atomic with the answer; README "Latency"),
   * made from how the turn ended. `settle` gets their results (in order) and returns what `run` would; a hook
   * whose part was written is not `run`. Should that batch fail with the part, the answer is written without it
   * and the hook is `run` as usual.
   */
  finalWrite?(scope: TurnScope, end: TurnEndForHooks): FinalWritePart | null;
  run(
    scope: TurnScope,
    turn: {
      userMessage: Message;
      assistantMessage: Message;
      status: Message["status"];
      /** Why a partial turn ended: stopped (POST stop), replaced (a newer turn) or disconnected. */
      stopReason?: "stopped" | "replaced" | "disconnected";
      error?: { code: string; message: string };
      usage: { input_tokens: number; output_tokens: number; total_tokens: number; credits: number };
      question: string;
    },
    emit: Emit,
  ): Promise<{ done?: Record<string, unknown> } | void>;
}

/** How a turn ended, as its final write records it (AfterTurnHook.finalWrite). */
export interface TurnEndForHooks {
  messageId: string;
  content: string;
  status: Message["status"];
  stopReason?: "stopped" | "replaced" | "disconnected";
  error: { code: string; message: string } | null;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; credits: number };
}

/** A hook's statements in the answer's final write, and what it makes of their results. */
export interface FinalWritePart {
  statements: D1PreparedStatement[];
  settle(results: D1Result[]): { done?: Record<string, unknown> } | void;
}

/** What a turn may be given: the providers registered in src/capabilities.ts (TurnDeps.capabilities). */
export interface Capabilities {
  tools: readonly ToolProvider[];
  context: readonly ContextProvider[];
  afterTurn: readonly AfterTurnHook[];
}
