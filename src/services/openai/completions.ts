import type { KeyCaller } from "../../contracts/caller";
import type { ServiceContext } from "../../contracts/context";
import type { Source, TurnUsage } from "../../db/schema";
import { ApiError, badRequest } from "../../lib/errors";
import type { Env } from "../../env";
import { agentFor } from "../agents/agents";
import { runAgentToAnswer, streamAgentRun } from "../agents/requests";
import { assertCanSpend } from "../billing/metering";
import { createChat, seedMessages } from "../chats/chats";
import { titleFrom } from "../chats/create";
import { runTurnJson, streamTurn } from "../chats/session";
import { assertKnowledgeBaseActive, prepareTurn, resolveModel } from "../chats/turns";
import { knowledgeBaseFor } from "../knowledge-bases";
import { LOCAL_MODEL_ID, listModels } from "../models/registry";

/**
 * The OpenAI-compatible chat completions (API-DECISIONS wave 3, "Protocols at the edge"): a
 * knowledge base (`kb:<id>`, optionally `kb:<id>:<model id>`) or an agent (`agent:<id>`) answers
 * the last user message, the earlier messages being its history. Each call is one turn of the one
 * pipeline — a new query chat of the key seeded with the history (a run of the agent, for agents) —
 * checked, metered and saved like POST /chats/fast-query or POST /agents/:id/messages.
 */

export interface ConversationMessage {
  role: "user" | "assistant";
  content: string;
}

export interface CompletionRequest {
  /** As the client sent it (echoed on every answer). */
  model: string;
  question: string;
  history: ConversationMessage[];
}

export type Target = { kind: "kb"; id: string; modelId: string | null } | { kind: "agent"; id: string };

/** A finished answer, whichever target gave it. */
export interface CompletionAnswer {
  id: string;
  chatId: string;
  content: string;
  sources: Source[];
  usage: TurnUsage | null;
  status: string;
  error?: { code: string; message: string } | null;
}

/** A message as the client sends it (string content, or an array of parts). */
export interface ClientMessage {
  role: string;
  content?: string | Array<{ type: string; text?: string }> | null;
}

/** Earlier messages kept as history, the most recent: more is folded away by the turn's summary anyway. */
export const MAX_HISTORY_MESSAGES = 100;

function textOf(m: ClientMessage, i: number): string {
  if (typeof m.content === "string") return m.content;
  if (!m.content) return "";
  return m.content
    .map((p, j) => {
      if (p.type !== "text") {
        throw badRequest(`Only text content is read here ('${p.type.slice(0, 40)}' parts are not); send images with POST /chats`, [
          { path: `body.messages.${i}.content.${j}.type`, message: "Only text parts" },
        ]);
      }
      return p.text ?? "";
    })
    .join("\n");
}

/** The question (the last message, a user message) and its history (earlier user and assistant messages with text). */
export function conversationOf(messages: ClientMessage[]): { question: string; history: ConversationMessage[] } {
  const last = messages.length - 1;
  const question = textOf(messages[last]!, last).trim();
  if (messages[last]!.role !== "user" || !question) {
    throw badRequest("The last message must be a user message with text: it is the question", [{ path: `body.messages.${last}`, message: "Expected the user's question" }]);
  }
  const history: ConversationMessage[] = [];
  messages.slice(0, last).forEach((m, i) => {
    if (m.role !== "user" && m.role !== "assistant") return;
    const content = textOf(m, i).trim();
    if (content) history.push({ role: m.role, content });
  });
  return { question, history: history.slice(-MAX_HISTORY_MESSAGES) };
}

const MODEL_FORMAT = "kb:<knowledge_base_id>, kb:<knowledge_base_id>:<model id> or agent:<agent_id> (GET /api/v1/openai/models lists them)";

export function parseTarget(model: string): Target {
  const m = /^(kb|agent):([^:\s]{1,128})(?::(\S{1,200}))?$/.exec(model.trim());
  if (!m) throw badRequest(`model must be ${MODEL_FORMAT}`, [{ path: "body.model", message: "Unknown model format" }]);
  if (m[1] === "agent") {
    if (m[3]) throw badRequest("An agent answers with its own model: use agent:<agent_id>", [{ path: "body.model", message: "No model id after an agent" }]);
    return { kind: "agent", id: m[2]! };
  }
  return { kind: "kb", id: m[2]!, modelId: m[3] ?? null };
}

/** The model a knowledge base answers with when the client names none: the first available provider model, else local-extractive. */
export function defaultModelId(env: Env): string {
  return listModels(env).find((m) => m.provider !== "local" && m.available)?.id ?? LOCAL_MODEL_ID;
}

/** The knowledge base's turn: checked, then a new query chat of the key holding the history, then the command. */
async function prepareKbTurn(ctx: ServiceContext, key: KeyCaller, target: Extract<Target, { kind: "kb" }>, req: CompletionRequest) {
  const db = ctx.db;
  const kb = await knowledgeBaseFor(ctx, target.id, "query:rag", { addressedBy: "param" });
  assertKnowledgeBaseActive(kb);
  const model = resolveModel(ctx, target.modelId ?? defaultModelId(ctx.env), "body.model");
  // Refused before the chat exists; the turn reuses this check.
  const spend = assertCanSpend(db, kb.tenantId);
  await spend;
  const chat = await createChat(db, {
    id: crypto.randomUUID(),
    kb,
    model: model.id,
    title: titleFrom(req.question),
    ownerUserId: null,
    apiKeyId: key.key.id,
    externalSubjectId: null,
    agentMode: "quick",
    isQuery: true,
    settings: {},
  });
  if (req.history.length) await seedMessages(db, chat.id, req.history);
  const cmd = await prepareTurn(ctx, key, chat, kb, {
    content: req.question,
    model,
    mode: "quick",
    websearch: false,
    operation: "chat",
    extras: { connector_slugs: [], delegate_agent_ids: [], skill_ids: [], attached_artifact_ids: [] },
    spend,
  });
  return { cmd, chat };
}

/** Runs the turn to its end. A turn that failed answers an error (it was still metered and saved). */
export async function completeJson(ctx: ServiceContext, key: KeyCaller, req: CompletionRequest): Promise<CompletionAnswer> {
  const target = parseTarget(req.model);
  let answer: CompletionAnswer;
  if (target.kind === "kb") {
    const { cmd, chat } = await prepareKbTurn(ctx, key, target, req);
    const o = await runTurnJson(ctx.env, cmd);
    answer = { id: chat.id, chatId: chat.id, content: o.assistant_message.content, sources: o.sources, usage: o.usage, status: o.status, error: o.error };
  } else {
    const agent = await agentFor(ctx, target.id, "agents:run");
    const r = await runAgentToAnswer(ctx, agent, { content: req.question, history: req.history });
    const md = r.assistant_message.metadata;
    answer = { id: r.run.id, chatId: r.chat_id, content: r.assistant_message.content, sources: md.sources, usage: r.usage, status: md.status, error: md.error };
  }
  if (answer.status === "error") {
    const e = answer.error ?? { code: "internal_error", message: "The answer could not be completed" };
    throw new ApiError(e.code === "model_error" ? "upstream_error" : "internal_error", e.message);
  }
  return answer;
}

/** Starts the turn as a stream of turn events (the Durable Object's SSE); `id` names the completion. */
export async function completeStream(ctx: ServiceContext, key: KeyCaller, req: CompletionRequest): Promise<{ id: string; events: Response }> {
  const target = parseTarget(req.model);
  if (target.kind === "kb") {
    const { cmd, chat } = await prepareKbTurn(ctx, key, target, req);
    return { id: chat.id, events: await streamTurn(ctx.env, cmd) };
  }
  const agent = await agentFor(ctx, target.id, "agents:run");
  const events = await streamAgentRun(ctx, agent, { content: req.question, history: req.history });
  return { id: events.headers.get("X-Run-Id") ?? crypto.randomUUID(), events };
}
