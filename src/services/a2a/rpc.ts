import type { Agent } from "../../db/schema";
import type { ServiceContext } from "../../contracts/context";
import { agentFor } from "../agents/agents";
import { agentWithRunState, type RunState } from "../agents/run-reads";
import { AgentTaskHandler } from "./server";
import { assertVersionSupported, requestedVersion } from "./versions";

const encoder = new TextEncoder();

type RpcError = { code: number; message: string; data?: unknown };
type ErrorMapper = (e: unknown) => RpcError;

const JSON_MEDIA_TYPES = new Set(["application/json", "application/a2a+json"]);

/**
 * One JSON-RPC request to an agent's A2A endpoint, as the A2A SDK's own JSON-RPC server answers it:
 * the raw body parsed here (malformed JSON → -32700), a non-JSON Content-Type refused (-32005), the
 * `A2A-Version` header checked against the card (VersionNotSupportedError, -32009), then the SDK's
 * transport handlers: 0.3 method names have a slash (`message/send`), 1.0 names are PascalCase
 * (`SendMessage`). Errors are JSON-RPC errors with HTTP 200, mapped by the SDK for the version spoken
 * (an unsupported method is unsupported-operation, never an internal error). Streaming methods answer
 * with an SSE Response of JSON-RPC objects; one that fails before its first event answers a plain
 * JSON-RPC error, and an error mid-stream is a last JSON-RPC error event.
 */
export async function answerA2aRpc(
  ctx: ServiceContext,
  agent: Agent,
  request: { body: string; origin: string; version?: string; contentType?: string },
  runState: RunState | null = null,
): Promise<Response | Record<string, unknown>> {
  const rawBody = request.body;
  const caller = ctx.caller;
  const [{ JsonRpcTransportHandler, defaultServerCallContextBuilder }, { LegacyJsonRpcTransportHandler }, errors] = await Promise.all([
    import("@a2a-js/sdk/server"),
    import("@a2a-js/sdk/compat/v0_3/server"),
    import("@a2a-js/sdk/errors"),
  ]);
  const parsed = parseBody(rawBody);
  if (!parsed.ok) return { jsonrpc: "2.0", id: null, error: { code: errors.A2A_ERROR_CODE.PARSE_ERROR, message: "Invalid JSON payload." } };
  const body = parsed.value;
  // One request object (batches are not offered): anything else is an invalid request (-32600).
  if (!isRecord(body)) return { jsonrpc: "2.0", id: null, error: { code: errors.A2A_ERROR_CODE.INVALID_REQUEST, message: "Invalid JSON-RPC Request: expected one request object." } };
  const legacy = typeof body.method === "string" && body.method.includes("/");
  const mapError: ErrorMapper = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
  const id = typeof body.id === "string" || typeof body.id === "number" ? body.id : null;
  const handler = new AgentTaskHandler(ctx, agent, request.origin, runState);
  const version = request.version;
  try {
    assertJsonContentType(request.contentType, errors.ContentTypeNotSupportedError);
    await assertVersionSupported(await handler.getAgentCard(), await requestedVersion(version));
  } catch (e) {
    return { jsonrpc: "2.0", id, error: mapError(e) };
  }
  const context = defaultServerCallContextBuilder({
    extensions: undefined,
    user: { isAuthenticated: true, userName: caller.type === "user" ? caller.user.id : caller.key.id },
    headers: {},
    requestedVersion: version ?? undefined,
  });
  const out = legacy ? await new LegacyJsonRpcTransportHandler(handler).handle(body, context) : await new JsonRpcTransportHandler(handler).handle(body, context);
  if (out && typeof (out as AsyncGenerator)[Symbol.asyncIterator] === "function") {
    // 0.3 clients read tasks/resubscribe as SSE whatever happens (the SDK's server streams even its errors).
    return sseOf(out as AsyncGenerator<unknown>, id, mapError, legacy && body.method === "tasks/resubscribe");
  }
  return out as Record<string, unknown>;
}

const SEND_METHODS = new Set(["SendMessage", "SendStreamingMessage", "message/send", "message/stream"]);

/**
 * The agent a JSON-RPC request addresses, authorized to run (404 otherwise). For a message send, the run's state
 * (the conversation named by `contextId`, the knowledge base, credits, skills) is read in the same round trip
 * (src/services/agents/run-reads.ts); the handler checks it as before. Any other method reads the agent alone.
 */
export async function agentForRpc(ctx: ServiceContext, agentId: string, rawBody: string): Promise<{ agent: Agent; runState: RunState | null }> {
  const parsed = parseBody(rawBody);
  const body = parsed.ok && isRecord(parsed.value) ? parsed.value : null;
  if (!body || typeof body.method !== "string" || !SEND_METHODS.has(body.method)) return { agent: await agentFor(ctx, agentId, "agents:run"), runState: null };
  const message = isRecord(body.params) && isRecord(body.params.message) ? body.params.message : null;
  const contextId = typeof message?.contextId === "string" && message.contextId ? message.contextId : null;
  const { agent, state } = await agentWithRunState(ctx, agentId, "agents:run", contextId);
  return { agent, runState: state };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function parseBody(raw: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch {
    return { ok: false };
  }
}

/** As the SDK's server: no Content-Type is accepted (the body is parsed as JSON); any other than JSON is refused. */
function assertJsonContentType(header: string | undefined, ContentTypeNotSupported: new (message: string) => Error) {
  if (!header) return;
  const media = header.split(";", 1)[0]!.trim().toLowerCase();
  if (!JSON_MEDIA_TYPES.has(media)) throw new ContentTypeNotSupported(`Unsupported Content-Type "${header}"; expected application/json.`);
}

const sse = (value: unknown) => encoder.encode(`data: ${JSON.stringify(value)}\n\n`);

async function sseOf(events: AsyncGenerator<unknown>, requestId: unknown, mapError: ErrorMapper, alwaysSse: boolean): Promise<Response | Record<string, unknown>> {
  let first: IteratorResult<unknown> | { error: unknown };
  try {
    first = await events.next();
  } catch (e) {
    if (!alwaysSse) return { jsonrpc: "2.0", id: requestId, error: mapError(e) };
    first = { error: e };
  }
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if ("error" in first) {
        controller.enqueue(sse({ jsonrpc: "2.0", id: requestId, error: mapError(first.error) }));
        controller.close();
      } else if (first.done) controller.close();
      else controller.enqueue(sse(first.value));
    },
    async pull(controller) {
      try {
        const { done, value } = await events.next();
        if (done) return controller.close();
        controller.enqueue(sse(value));
      } catch (e) {
        controller.enqueue(sse({ jsonrpc: "2.0", id: requestId, error: mapError(e) }));
        controller.close();
      }
    },
    async cancel() {
      await events.return(undefined);
    },
  });
  return new Response(stream, { status: 200, headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" } });
}
