import { z } from "@hono/zod-openapi";
import { notFound } from "../../lib/errors";
import { errorResponses, jsonBody } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { answerA2aRpc } from "../../services/a2a/rpc";
import { agentFor, getAgent } from "../../services/agents/agents";
import { routesTagged } from "../define-route";
import { cardOfAgent } from "../../services/a2a/protocol";

const route = routesTagged(["External (A2A) agents"]);

export const a2aServerRoutes = createRouter();

const card = route("get", "/agents/{id}/a2a/.well-known/agent-card.json", "public", {
  operationId: "getAgentA2aCard",
  summary: "The A2A agent card of one of our agents (public; it names the bearer scheme)",
  description: "Any A2A client can discover the agent here; calls to its JSON-RPC endpoint need an API key that may run it.",
  responses: {
    200: { description: "An A2A 1.0 agent card", content: { "application/json": { schema: z.record(z.string(), z.unknown()) } } },
    404: errorResponses[404],
    429: errorResponses[429],
    500: errorResponses[500],
  },
});
a2aServerRoutes.openapi(card, async (c) => {
  const agent = await getAgent(c.get("db"), c.req.valid("param").id);
  if (!agent || agent.status !== "active") throw notFound("Agent");
  const { AgentCard } = await import("@a2a-js/sdk");
  return c.json(AgentCard.toJSON(cardOfAgent(agent, new URL(c.req.url).origin)) as Record<string, unknown>, 200);
});

const rpc = route("post", "/agents/{id}/a2a", "agents:run", {
  operationId: "agentA2aJsonRpc", summary: "A2A JSON-RPC endpoint of one of our agents (each task is a run)",
  description:
    "Protocol 1.0 methods `SendMessage`, `SendStreamingMessage` (SSE), `GetTask`, `CancelTask`, and the 0.3 names " +
    "`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`. Task id = run id; context id = the run's chat " +
    "(send it back to continue the conversation). Protocol errors are JSON-RPC errors with HTTP 200.",
  request: {
    body: jsonBody(
      z
        .object({ jsonrpc: z.string().optional(), method: z.string().optional(), id: z.unknown().optional(), params: z.unknown().optional() })
        .passthrough(),
    ),
  },
  responses: {
    200: {
      description: "A JSON-RPC response, or an SSE stream of them for the streaming methods",
      content: { "application/json": { schema: z.record(z.string(), z.unknown()) }, "text/event-stream": { schema: z.string() } },
    },
  },
});
a2aServerRoutes.openapi(rpc, async (c) => {
  const agent = await agentFor(c, c.req.valid("param").id, "agents:run");
  const out = await answerA2aRpc(c, agent, c.req.valid("json") as Record<string, unknown>);
  // A streaming method answers with its own SSE Response; the typed-response check does not apply.
  return out instanceof Response ? (out as never) : c.json(out, 200);
});

