import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { extraErrors, jsonBody, jsonContent, pageSchema, pagingQuery } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { agentFor } from "../../services/agents/agents";
import { agentForRun, listRunsOf, runAgentToAnswer, stopRunOf, streamAgentRun, visibleRunOf } from "../../services/agents/requests";
import { publicRun } from "../../services/agents/runs";
import { RunMessageBody, RunSchema } from "./schemas";
import { TurnResponseSchema } from "../chats/schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Agents"]);

export const agentRunRoutes = createRouter();

const message = route("post", "/agents/{id}/messages", "agents:run", {
  operationId: "runAgent", summary: "Start a run and get the complete answer",
  description:
    "Without `chat_id` a new chat (tied to the agent) is created; with one, the run continues that chat of this agent " +
    "(another agent's chat → 404, a terminated chat → 409 chat_terminated). An archived agent → 409 agent_archived.",
  request: { body: jsonBody(RunMessageBody) },
  responses: {
    200: jsonContent(
      z.object({ run: RunSchema, chat_id: z.string(), assistant_message: TurnResponseSchema.shape.assistant_message, usage: TurnResponseSchema.shape.usage }),
      "The run, its chat and answer",
    ),
    ...extraErrors(402),
  },
});
agentRunRoutes.openapi(message, async (c) => {
  const { agent, runState } = await agentForRun(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
  return c.json(await runAgentToAnswer(ctxOf(c), agent, c.req.valid("json"), runState), 200);
});

const stream = route("post", "/agents/{id}/messages/stream", "agents:run", {
  operationId: "streamAgentRun", summary: "Start a run and stream it as Server-Sent Events",
  description: "The chat events; the response carries `X-Run-Id`, `user_message` carries `run_id`, and `done` carries the run.",
  request: { body: jsonBody(RunMessageBody) },
  responses: {
    200: { description: "text/event-stream", content: { "text/event-stream": { schema: z.string() } } },
    ...extraErrors(402),
  },
});
agentRunRoutes.openapi(stream, async (c) => {
  const { agent, runState } = await agentForRun(ctxOf(c), c.req.valid("param").id, c.req.valid("json"));
  return (await streamAgentRun(ctxOf(c), agent, c.req.valid("json"), runState)) as unknown as ReturnType<typeof c.json>;
});

const runs = route("get", "/agents/{id}/runs", "agents:read", {
  operationId: "listAgentRuns", summary: "Runs of an agent, newest first",
  request: {
    query: pagingQuery(100, 20).extend({ status: z.enum(["queued", "running", "completed", "failed", "cancelled"]).optional() }),
  },
  responses: { 200: jsonContent(pageSchema("runs", RunSchema), "Runs") },
});
agentRunRoutes.openapi(runs, async (c) => {
  const agent = await agentFor(ctxOf(c), c.req.valid("param").id, "agents:read");
  return c.json(await listRunsOf(ctxOf(c), agent, c.req.valid("query")), 200);
});

const run = route("get", "/agents/{id}/runs/{runId}", "agents:read", {
  operationId: "getAgentRun", summary: "One run", responses: { 200: jsonContent(RunSchema, "The run") },
});
agentRunRoutes.openapi(run, async (c) => {
  const p = c.req.valid("param");
  const agent = await agentFor(ctxOf(c), p.id, "agents:read");
  return c.json(publicRun(await visibleRunOf(ctxOf(c), agent, p.runId)), 200);
});

const stop = route("post", "/agents/{id}/runs/{runId}/stop", "agents:run", {
  operationId: "stopAgentRun", summary: "Stop an in-flight run (it becomes cancelled; its partial output is kept)",
  responses: { 200: jsonContent(z.object({ stopped: z.boolean(), run: RunSchema }), "Whether a run in flight was stopped") },
});
agentRunRoutes.openapi(stop, async (c) => {
  const p = c.req.valid("param");
  const agent = await agentFor(ctxOf(c), p.id, "agents:run");
  return c.json(await stopRunOf(ctxOf(c), agent, p.runId), 200);
});
