import type { Context } from "hono";
import type { Agent } from "../../db/schema";
import type { AppEnv } from "../../types";
import { AgentTaskHandler } from "./server";

const encoder = new TextEncoder();

/**
 * One JSON-RPC request to an agent's A2A endpoint, through the A2A SDK's transport handlers: 0.3
 * method names have a slash (`message/send`), 1.0 names are PascalCase (`SendMessage`). The answer
 * is a JSON-RPC object, or, for the streaming methods, an SSE Response whose events are JSON-RPC
 * objects (an error mid-stream becomes a last JSON-RPC error event).
 */
export async function answerA2aRpc(c: Context<AppEnv>, agent: Agent, body: Record<string, unknown>): Promise<Response | Record<string, unknown>> {
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
  const legacy = typeof body.method === "string" && body.method.includes("/");
  const out = legacy ? await new LegacyJsonRpcTransportHandler(handler).handle(body, context) : await new JsonRpcTransportHandler(handler).handle(body, context);
  if (out && typeof (out as AsyncGenerator)[Symbol.asyncIterator] === "function") return sseOf(out as AsyncGenerator<unknown>, body.id ?? null);
  return out as Record<string, unknown>;
}

function sseOf(events: AsyncGenerator<unknown>, requestId: unknown): Response {
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await events.next();
        if (done) return controller.close();
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(value)}\n\n`));
      } catch (e) {
        const message = e instanceof Error ? e.message : "stream failed";
        controller.enqueue(encoder.encode(`data: ${JSON.stringify({ jsonrpc: "2.0", id: requestId, error: { code: -32603, message } })}\n\n`));
        controller.close();
      }
    },
    async cancel() {
      await events.return(undefined);
    },
  });
  return new Response(stream, { status: 200, headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" } });
}
