import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { notFound } from "../../lib/errors";
import { errorResponses, IdParam, jsonBody, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { AgentTaskHandler, cardOfAgent } from "../../services/a2a/server";
import { agentFor, getAgent } from "../../services/agents/agents";

const tags = ["External (A2A) agents"];

const card = createRoute({
  method: "get",
  path: "/agents/{id}/a2a/.well-known/agent-card.json",
  tags,
  operationId: "getAgentA2aCard",
  ...routePermission("public"),
  summary: "The A2A agent card of one of our agents (public; it names the bearer scheme)",
  description: "Any A2A client can discover the agent here; calls to its JSON-RPC endpoint need an API key that may run it.",
  request: { params: IdParam },
  responses: {
    200: { description: "An A2A 1.0 agent card", content: { "application/json": { schema: z.record(z.string(), z.unknown()) } } },
    404: errorResponses[404],
    429: errorResponses[429],
    500: errorResponses[500],
  },
});

const rpc = createRoute({
  method: "post",
  path: "/agents/{id}/a2a",
  tags,
  operationId: "agentA2aJsonRpc",
  ...routePermission("agents:run"),
  summary: "A2A JSON-RPC endpoint of one of our agents (each task is a run)",
  description:
    "Protocol 1.0 methods `SendMessage`, `SendStreamingMessage` (SSE), `GetTask`, `CancelTask`, and the 0.3 names " +
    "`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`. Task id = run id; context id = the run's chat " +
    "(send it back to continue the conversation). Protocol errors are JSON-RPC errors with HTTP 200.",
  security: userOrKey,
  request: {
    params: IdParam,
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
    ...errorResponses,
  },
});

const encoder = new TextEncoder();

export const a2aServerRoutes = createRouter()
  .openapi(card, async (c) => {
    const agent = await getAgent(c.get("db"), c.req.valid("param").id);
    if (!agent || agent.status !== "active") throw notFound("Agent");
    const { AgentCard } = await import("@a2a-js/sdk");
    return c.json(AgentCard.toJSON(cardOfAgent(agent, new URL(c.req.url).origin)) as Record<string, unknown>, 200);
  })
  .openapi(rpc, async (c) => {
    const agent = await agentFor(c, c.req.valid("param").id, "agents:run");
    const body = c.req.valid("json") as Record<string, unknown>;
    const caller = c.get("caller");
    const [{ JsonRpcTransportHandler, defaultServerCallContextBuilder }, { LegacyJsonRpcTransportHandler }] = await Promise.all([
      import("@a2a-js/sdk/server"),
      import("@a2a-js/sdk/compat/v0_3/server"),
    ]);
    const handler = new AgentTaskHandler(c, agent);
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: { isAuthenticated: true, userName: caller.type === "user" ? caller.user.id : caller.key.id },
      headers: {},
      requestedVersion: c.req.header("A2A-Version") ?? undefined,
    });
    // 0.3 method names have a slash (message/send); 1.0 names are PascalCase (SendMessage).
    const legacy = typeof body.method === "string" && body.method.includes("/");
    const out = legacy ? await new LegacyJsonRpcTransportHandler(handler).handle(body, context) : await new JsonRpcTransportHandler(handler).handle(body, context);
    if (out && typeof (out as AsyncGenerator)[Symbol.asyncIterator] === "function") {
      const events = out as AsyncGenerator<unknown>;
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const { done, value } = await events.next();
            if (done) return controller.close();
            controller.enqueue(encoder.encode(`data: ${JSON.stringify(value)}\n\n`));
          } catch (e) {
            const message = e instanceof Error ? e.message : "stream failed";
            controller.enqueue(encoder.encode(`data: ${JSON.stringify({ jsonrpc: "2.0", id: body.id ?? null, error: { code: -32603, message } })}\n\n`));
            controller.close();
          }
        },
        async cancel() {
          await events.return(undefined);
        },
      });
      return new Response(stream, {
        status: 200,
        headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" },
      }) as unknown as ReturnType<typeof c.json>;
    }
    return c.json(out as Record<string, unknown>, 200);
  });
