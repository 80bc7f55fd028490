import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { routePermission } from "../../auth/route-permission";
import type { Agent } from "../../db/schema";
import { notFound } from "../../lib/errors";
import { errorResponses, extraErrors, IdParam, jsonBody, jsonContent, pagingQuery, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { agentFor, assertActive } from "../../services/agents/agents";
import { executeRunJson, executeRunStream } from "../../services/agents/execute";
import { cancelRun, chatAgentId, getRun, listRuns, publicRun, runVisible, startRun, type RunViewer } from "../../services/agents/runs";
import { actorOf, assertCanSpend } from "../../services/billing/metering";
import { assertNotTerminated, assertSubjectParam, ownsChat } from "../../services/chats/access";
import { getChat } from "../../services/chats/chats";
import { stopTurn } from "../../services/chats/session";
import { assertKnowledgeBaseActive, resolveModel } from "../../services/chats/turns";
import { getKnowledgeBase } from "../../services/knowledge-bases";
import type { AppEnv } from "../../types";
import { AgentRunParams, RunMessageBody, RunSchema } from "./schemas";
import { TurnResponseSchema } from "../chats/schemas";

const tags = ["Agents"];

const message = createRoute({
  method: "post",
  path: "/agents/{id}/messages",
  tags,
  operationId: "runAgent",
  ...routePermission("agents:run"),
  summary: "Start a run and get the complete answer",
  description:
    "Without `chat_id` a new chat (tied to the agent) is created; with one, the run continues that chat of this agent " +
    "(another agent's chat → 404, a terminated chat → 409 chat_terminated). An archived agent → 409 agent_archived.",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(RunMessageBody) },
  responses: {
    200: jsonContent(
      z.object({ run: RunSchema, chat_id: z.string(), assistant_message: TurnResponseSchema.shape.assistant_message, usage: TurnResponseSchema.shape.usage }),
      "The run, its chat and answer",
    ),
    ...extraErrors(402),
    ...errorResponses,
  },
});

const stream = createRoute({
  method: "post",
  path: "/agents/{id}/messages/stream",
  tags,
  operationId: "streamAgentRun",
  ...routePermission("agents:run"),
  summary: "Start a run and stream it as Server-Sent Events",
  description: "The chat events; the response carries `X-Run-Id`, `user_message` carries `run_id`, and `done` carries the run.",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(RunMessageBody) },
  responses: {
    200: { description: "text/event-stream", content: { "text/event-stream": { schema: z.string() } } },
    ...extraErrors(402),
    ...errorResponses,
  },
});

const runs = createRoute({
  method: "get",
  path: "/agents/{id}/runs",
  tags,
  operationId: "listAgentRuns",
  ...routePermission("agents:read"),
  summary: "Runs of an agent, newest first",
  security: userOrKey,
  request: {
    params: IdParam,
    query: pagingQuery(100, 20).extend({ status: z.enum(["queued", "running", "completed", "failed", "cancelled"]).optional() }),
  },
  responses: {
    200: jsonContent(z.object({ runs: z.array(RunSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }), "Runs"),
    ...errorResponses,
  },
});

const run = createRoute({
  method: "get",
  path: "/agents/{id}/runs/{runId}",
  tags,
  operationId: "getAgentRun",
  ...routePermission("agents:read"),
  summary: "One run",
  security: userOrKey,
  request: { params: AgentRunParams },
  responses: { 200: jsonContent(RunSchema, "The run"), ...errorResponses },
});

const stop = createRoute({
  method: "post",
  path: "/agents/{id}/runs/{runId}/stop",
  tags,
  operationId: "stopAgentRun",
  ...routePermission("agents:run"),
  summary: "Stop an in-flight run (it becomes cancelled; its partial output is kept)",
  security: userOrKey,
  request: { params: AgentRunParams },
  responses: { 200: jsonContent(z.object({ stopped: z.boolean(), run: RunSchema }), "Whether a run in flight was stopped"), ...errorResponses },
});

const viewerOf = (c: Context<AppEnv>): RunViewer => {
  const caller = c.get("caller");
  return caller.type === "user" ? { userId: caller.user.id } : { apiKey: true };
};

/** Authorizes and prepares a run (JSON and stream alike): every refusal before any work. */
async function prepareRun(c: Context<AppEnv>, agent: Agent, body: z.infer<typeof RunMessageBody>, streaming: boolean) {
  const caller = c.get("caller");
  const db = c.get("db");
  assertSubjectParam(caller, body.external_subject_id);
  assertActive(agent);
  let chat = null;
  if (body.chat_id) {
    chat = await getChat(db, body.chat_id.toLowerCase());
    // Only a chat of this agent that the caller owns; anything else is not found.
    if (!chat || chatAgentId(chat) !== agent.id || chat.tenantId !== agent.tenantId || !ownsChat(caller, chat, body.external_subject_id)) {
      throw notFound("Chat");
    }
    assertNotTerminated(chat);
  }
  const kb = await getKnowledgeBase(db, agent.knowledgeBaseId);
  if (!kb) throw notFound("Knowledge base");
  assertKnowledgeBaseActive(kb);
  resolveModel(c, agent.config.model, "model");
  await assertCanSpend(db, agent.tenantId);
  return startRun(db, {
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
  });
}

export const agentRunRoutes = createRouter()
  .openapi(message, async (c) => {
    const agent = await agentFor(c, c.req.valid("param").id, "agents:run");
    const { cmd, chat } = await prepareRun(c, agent, c.req.valid("json"), false);
    const { outcome, run: done } = await executeRunJson(c.env, c.get("db"), cmd);
    return c.json({ run: publicRun(done), chat_id: chat.id, assistant_message: outcome.assistant_message, usage: outcome.usage }, 200);
  })
  .openapi(stream, async (c) => {
    const agent = await agentFor(c, c.req.valid("param").id, "agents:run");
    const { cmd } = await prepareRun(c, agent, c.req.valid("json"), true);
    const res = await executeRunStream(c.env, c.get("db"), cmd, (p) => c.executionCtx.waitUntil(p));
    return res as unknown as ReturnType<typeof c.json>;
  })
  .openapi(runs, async (c) => {
    const agent = await agentFor(c, c.req.valid("param").id, "agents:read");
    const q = c.req.valid("query");
    const { rows, total } = await listRuns(c.get("db"), agent.id, { ...q, viewer: viewerOf(c) });
    return c.json({ runs: rows.map(publicRun), total, limit: q.limit, offset: q.offset }, 200);
  })
  .openapi(run, async (c) => {
    const p = c.req.valid("param");
    const agent = await agentFor(c, p.id, "agents:read");
    const r = await getRun(c.get("db"), p.runId);
    if (!r || r.agentId !== agent.id || !(await runVisible(c.get("db"), r.id, viewerOf(c)))) throw notFound("Run");
    return c.json(publicRun(r), 200);
  })
  .openapi(stop, async (c) => {
    const p = c.req.valid("param");
    const db = c.get("db");
    const agent = await agentFor(c, p.id, "agents:run");
    const r = await getRun(db, p.runId);
    if (!r || r.agentId !== agent.id || !(await runVisible(db, r.id, viewerOf(c)))) throw notFound("Run");
    let stopped = false;
    if (await cancelRun(db, r.id)) {
      stopped = true;
      // The turn saves its partial output into the (now cancelled) run.
      if (r.chatId) await stopTurn(c.env, r.chatId);
    }
    return c.json({ stopped, run: publicRun((await getRun(db, r.id))!) }, 200);
  });
