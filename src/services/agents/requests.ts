import type { Agent, AgentRun } from "../../db/schema";
import type { ServiceContext } from "../../contracts/context";
import { notFound } from "../../lib/errors";
import { actorOf, assertCreditsLeft } from "../billing/metering";
import { assertNotTerminated, assertSubjectParam, ownsChat } from "../chats/access";
import { stopTurn } from "../chats/session";
import { assertKnowledgeBaseActive, resolveModel } from "../chats/turns";
import { agentWithRunState, readRunState, type RunState } from "./run-reads";
import { assertActive } from "./agents";
import { executeRunJson, executeRunStream } from "./execute";
import { cancelRun, chatAgentId, getRun, listRuns, publicRun, visibleRun, type RunViewer, type StartRun } from "./runs";
import { startRunSearched } from "./run-search";
import { pageBody } from "../../lib/page-body";
import { runViewerOf } from "../../contracts/access";

/** What the runs API does for its caller: start a run (JSON or stream), list, read and stop runs. */

export interface RunRequest {
  content: string;
  /** Continue this chat of the agent (the caller's own). */
  chat_id?: string;
  external_subject_id?: string;
  /** Earlier messages of the conversation, for a new chat (the OpenAI-compatible endpoint sends them). */
  history?: StartRun["history"];
}

/** Whose runs a caller sees (src/contracts/access.ts). */
export const viewerOf = (ctx: ServiceContext): RunViewer => runViewerOf(ctx.caller);

/** Authorizes and prepares a run (JSON and stream alike): every refusal comes before any work. */
async function prepareRun(ctx: ServiceContext, agent: Agent, body: RunRequest, streaming: boolean, runState: RunState | null) {
  const caller = ctx.caller;
  const db = ctx.db;
  assertSubjectParam(caller, body.external_subject_id);
  assertActive(agent);
  // One round trip for everything below (the chat, the knowledge base, the credits, skills, data files), already
  // made with the agent's own read (agentForRun) when it was for this chat.
  const state = runState?.chatId === (body.chat_id?.toLowerCase() ?? "") ? runState : await readRunState(db, agent, body.chat_id);
  let chat = null;
  if (body.chat_id) {
    chat = state.chat;
    // Only a chat of this agent that the caller owns; anything else is not found.
    if (!chat || chatAgentId(chat) !== agent.id || chat.tenantId !== agent.tenantId || !ownsChat(caller, chat, body.external_subject_id)) {
      throw notFound("Chat");
    }
    assertNotTerminated(chat);
  }
  const kb = state.kb;
  if (!kb) throw notFound("Knowledge base");
  assertKnowledgeBaseActive(kb);
  resolveModel(ctx, agent.config.model, "model");
  assertCreditsLeft(state.tenant);
  return startRunSearched(ctx, {
    reads: state.reads,
    agent,
    kb,
    trigger: "api",
    content: body.content,
    actor: actorOf(caller),
    subject: caller.type === "user" ? `user:${caller.user.id}` : body.external_subject_id ? `ext:${body.external_subject_id}` : `key:${caller.key.id}`,
    chat,
    owner: {
      userId: caller.type === "user" ? caller.user.id : null,
      apiKeyId: caller.type === "api_key" ? caller.key.id : null,
      externalSubjectId: body.external_subject_id ?? null,
    },
    stream: streaming,
    history: body.chat_id ? undefined : body.history,
  });
}

/** The agent a run request addresses, authorized to run, read with the run's state in one round trip (./run-reads.ts). */
export async function agentForRun(ctx: ServiceContext, agentId: string, body: RunRequest): Promise<{ agent: Agent; runState: RunState }> {
  const { agent, state } = await agentWithRunState(ctx, agentId, "agents:run", body.chat_id ?? null);
  return { agent, runState: state };
}

/** Runs the agent to its complete answer. */
export async function runAgentToAnswer(ctx: ServiceContext, agent: Agent, body: RunRequest, runState: RunState | null = null) {
  const { cmd, chat } = await prepareRun(ctx, agent, body, false, runState);
  const { outcome, run } = await executeRunJson(ctx.env, ctx.db, cmd);
  return { run: publicRun(run), chat_id: chat.id, assistant_message: outcome.assistant_message, usage: outcome.usage };
}

/** Runs the agent as a live SSE stream (the response carries X-Run-Id). */
export async function streamAgentRun(ctx: ServiceContext, agent: Agent, body: RunRequest, runState: RunState | null = null): Promise<Response> {
  const { cmd } = await prepareRun(ctx, agent, body, true, runState);
  return executeRunStream(ctx.env, ctx.db, cmd, (p) => ctx.waitUntil(p));
}

export async function listRunsOf(ctx: ServiceContext, agent: Agent, q: { limit: number; offset: number; status?: AgentRun["status"] }) {
  return pageBody("runs", await listRuns(ctx.db, agent.id, { ...q, viewer: viewerOf(ctx) }), q, publicRun);
}

/** A run of this agent that the caller may see (404 otherwise). */
export async function visibleRunOf(ctx: ServiceContext, agent: Agent, runId: string): Promise<AgentRun> {
  const run = await visibleRun(ctx.db, agent.id, runId, viewerOf(ctx));
  if (!run) throw notFound("Run");
  return run;
}

/** Stops a run in flight: it becomes cancelled and its turn saves the partial output into it. */
export async function stopRunOf(ctx: ServiceContext, agent: Agent, runId: string) {
  const db = ctx.db;
  const run = await visibleRunOf(ctx, agent, runId);
  const stopped = await cancelRun(db, run.id);
  if (stopped && run.chatId) await stopTurn(ctx.env, run.chatId);
  return { stopped, run: publicRun((await getRun(db, run.id))!) };
}
