import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { badRequest, notFound } from "../../lib/errors";
import { errorResponses } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { agentForRpc, answerA2aRpc } from "../../services/a2a/rpc";
import { getAgent } from "../../services/agents/agents";
import { routesTagged } from "../define-route";
import { cardOfAgent } from "../../services/a2a/protocol";
import { A2A_VERSION_HEADER, cardForVersion, requestedVersion } from "../../services/a2a/versions";

const route = routesTagged(["External (A2A) agents"]);

export const a2aServerRoutes = createRouter();

const card = route("get", "/agents/{id}/a2a/.well-known/agent-card.json", "public", {
  operationId: "getAgentA2aCard",
  summary: "The A2A agent card of one of our agents (public; it names the bearer scheme)",
  description:
    "Any A2A client can discover the agent here; calls to its JSON-RPC endpoint need an API key that may run it. " +
    "Without an `A2A-Version` header, or with `A2A-Version: 0.3`, the card is in the 0.3 shape (`url`, " +
    "`preferredTransport`, `protocolVersion`) with the 1.0 interfaces embedded as `supportedInterfaces`; with " +
    "`A2A-Version: 1.0` it is the 1.0 card. Any other version is refused (400).",
  request: { headers: z.object({ "A2A-Version": z.string().optional().openapi({ example: "1.0" }) }) },
  responses: {
    200: { description: "An A2A agent card (0.3 or 1.0, by the A2A-Version header)", content: { "application/json": { schema: z.record(z.string(), z.unknown()) } } },
    400: errorResponses[400],
    404: errorResponses[404],
    429: errorResponses[429],
    500: errorResponses[500],
  },
});
a2aServerRoutes.openapi(card, async (c) => {
  const agent = await getAgent(c.get("db"), c.req.valid("param").id);
  if (!agent || agent.status !== "active") throw notFound("Agent");
  const version = await requestedVersion(c.req.header(A2A_VERSION_HEADER));
  try {
    const body = await cardForVersion(cardOfAgent(agent, new URL(c.req.url).origin), version);
    // Shared caches keep one entry per version.
    return c.json(body, 200, { Vary: A2A_VERSION_HEADER });
  } catch (e) {
    const { VersionNotSupportedError } = await import("@a2a-js/sdk/errors");
    if (e instanceof VersionNotSupportedError) throw badRequest(e.message, [{ path: "header.A2A-Version", message: "Unsupported A2A protocol version" }]);
    throw e;
  }
});

const rpc = route("post", "/agents/{id}/a2a", "agents:run", {
  operationId: "agentA2aJsonRpc", summary: "A2A JSON-RPC endpoint of one of our agents (each task is a run)",
  description:
    "Protocol 1.0 methods `SendMessage`, `SendStreamingMessage` (SSE), `GetTask`, `CancelTask`, and the 0.3 names " +
    "`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`. Task id = run id; context id = the run's chat " +
    "(send it back to continue the conversation). `GetTask` (`tasks/get`) returns the task's history, honouring " +
    "`historyLength`. Protocol errors are JSON-RPC errors with HTTP 200: malformed JSON -32700, an unsupported " +
    "`A2A-Version` -32009, methods this agent does not offer (subscribe/resubscribe, push notifications, task " +
    "lists) -32004.",
  request: {
    headers: z.object({ "A2A-Version": z.string().optional().openapi({ description: "1.0 or 0.3 (absent: 0.3)" }) }),
    // Not validated here: the JSON-RPC layer answers malformed or wrong bodies with JSON-RPC errors.
    body: {
      required: true,
      content: {
        "application/json": {
          schema: {
            type: "object",
            description: "A JSON-RPC 2.0 request",
            properties: { jsonrpc: { type: "string", enum: ["2.0"] }, id: { type: ["string", "integer"] }, method: { type: "string" }, params: { type: "object" } },
            required: ["jsonrpc", "method"],
          },
        },
      },
    },
  },
  responses: {
    200: {
      description: "A JSON-RPC response, or an SSE stream of them for the streaming methods",
      content: { "application/json": { schema: z.record(z.string(), z.unknown()) }, "text/event-stream": { schema: z.string() } },
    },
  },
});
a2aServerRoutes.openapi(rpc, async (c) => {
  const body = await c.req.text();
  const { agent, runState } = await agentForRpc(ctxOf(c), c.req.valid("param").id, body);
  const out = await answerA2aRpc(
    ctxOf(c),
    agent,
    { body, origin: new URL(c.req.url).origin, version: c.req.header(A2A_VERSION_HEADER), contentType: c.req.header("Content-Type") },
    runState,
  );
  // A streaming method answers with its own SSE Response; the typed-response check does not apply.
  return out instanceof Response ? (out as never) : c.json(out, 200);
});

