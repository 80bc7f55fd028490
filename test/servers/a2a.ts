import type http from "node:http";
import { AgentCard, Role, TaskState, type Message, type Part } from "@a2a-js/sdk";
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  defaultServerCallContextBuilder,
  type AgentExecutor,
} from "@a2a-js/sdk/server";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";

/**
 * A real A2A agent for the tests, built with @a2a-js/sdk's server classes on
 * node:http (protocol 1.0 JSON-RPC; 0.3 method names through the SDK's
 * compatibility handler):
 *   GET  /.well-known/agent-card.json   a 1.0 card (JSON-RPC at /rpc, streaming)
 *   GET  /v03/.well-known/agent-card.json  a 0.3 card (url /rpc, protocolVersion 0.3.0)
 *   GET  /private/.well-known/agent-card.json  the 1.0 card, only with `Authorization: Bearer remote-secret` (401 otherwise)
 *   GET  /invalid-card.json             JSON that is not a card
 *   GET  /not-json                      an HTML page
 *   POST /rpc                           JSON-RPC; records the request headers
 *   GET  /__received?contains=<text>    {requests: [{headers, body}]} of the RPC calls whose body contains <text>
 * The agent answers "Remote agent: <question> The Zorblax warranty lasts 7 years." as a task with an
 * artifact; a question containing "slow" waits 5 s first; "explode" makes the task fail; "plain" answers
 * with a bare message.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = (value: string): Part => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "text/plain" });
export const REMOTE_FACT = "The Zorblax warranty lasts 7 years.";
/** The credential the private card asks for (registrations store it in their headers). */
export const PRIVATE_CARD_SECRET = "remote-secret";

function card1(base: string): AgentCard {
  return {
    name: "Warranty oracle",
    description: "Knows everything about Zorblax warranties.",
    supportedInterfaces: [{ url: `${base}/rpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
    provider: undefined,
    version: "2.1.0",
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [
      { id: "warranty", name: "Warranty answers", description: "Answers warranty questions", tags: ["warranty"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] },
    ],
    signatures: [],
  };
}

const card03 = (base: string) => ({
  protocolVersion: "0.3.0",
  name: "Legacy oracle",
  description: "A 0.3 peer.",
  url: `${base}/rpc`,
  preferredTransport: "JSONRPC",
  version: "0.9.0",
  capabilities: { streaming: false },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "legacy", name: "Legacy answers", description: "Answers in the old protocol", tags: [] }],
});

const executor: AgentExecutor = {
  async execute(ctx, bus) {
    const question = (ctx.userMessage.parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join(" ");
    const answer = `Remote agent: ${question} ${REMOTE_FACT}`;
    if (/slow/i.test(question)) await sleep(5000);
    if (/plain/i.test(question)) {
      const m: Message = {
        messageId: crypto.randomUUID(),
        contextId: ctx.contextId,
        taskId: "",
        role: Role.ROLE_AGENT,
        parts: [text(answer)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      };
      bus.publish(AgentEvent.message(m));
      bus.finished();
      return;
    }
    const base = { taskId: ctx.taskId, contextId: ctx.contextId, metadata: undefined };
    const now = () => new Date().toISOString();
    bus.publish(
      AgentEvent.task({
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
        artifacts: [],
        history: [ctx.userMessage],
        metadata: undefined,
      }),
    );
    bus.publish(AgentEvent.statusUpdate({ ...base, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() } }));
    if (/explode/i.test(question)) {
      const m: Message = { messageId: crypto.randomUUID(), contextId: ctx.contextId, taskId: ctx.taskId, role: Role.ROLE_AGENT, parts: [text("The oracle exploded.")], metadata: undefined, extensions: [], referenceTaskIds: [] };
      bus.publish(AgentEvent.statusUpdate({ ...base, status: { state: TaskState.TASK_STATE_FAILED, message: m, timestamp: now() } }));
      bus.finished();
      return;
    }
    // The answer in two chunks (append), so streaming clients see an artifact built up.
    const half = Math.floor(answer.length / 2);
    const artifact = (value: string) => ({ artifactId: "answer", name: "answer", description: "", parts: [text(value)], metadata: undefined, extensions: [] });
    bus.publish(AgentEvent.artifactUpdate({ ...base, artifact: artifact(answer.slice(0, half)), append: false, lastChunk: false }));
    bus.publish(AgentEvent.artifactUpdate({ ...base, artifact: artifact(answer.slice(half)), append: true, lastChunk: true }));
    bus.publish(AgentEvent.statusUpdate({ ...base, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() } }));
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: "", metadata: undefined, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() } }));
    bus.finished();
  },
};

const received: Array<{ headers: Record<string, unknown>; body: string }> = [];

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

let handlers: { v1: JsonRpcTransportHandler; legacy: LegacyJsonRpcTransportHandler } | null = null;

export async function handler(req: http.IncomingMessage, res: http.ServerResponse, self: { url: string }): Promise<void> {
  const url = new URL(req.url ?? "/", "http://x");
  const json = (status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify(body));
  };
  if (!handlers) {
    const requestHandler = new DefaultRequestHandler(card1(self.url), new InMemoryTaskStore(), executor);
    handlers = { v1: new JsonRpcTransportHandler(requestHandler), legacy: new LegacyJsonRpcTransportHandler(requestHandler) };
  }
  if (req.method === "GET" && url.pathname === "/.well-known/agent-card.json") return json(200, AgentCard.toJSON(card1(self.url)));
  if (req.method === "GET" && url.pathname === "/v03/.well-known/agent-card.json") return json(200, card03(self.url));
  if (req.method === "GET" && url.pathname === "/private/.well-known/agent-card.json") {
    if (req.headers.authorization !== `Bearer ${PRIVATE_CARD_SECRET}`) return json(401, { error: "unauthorized" });
    return json(200, AgentCard.toJSON(card1(self.url)));
  }
  if (req.method === "GET" && url.pathname === "/invalid-card.json") return json(200, { hello: "world", skills: "none" });
  if (req.method === "GET" && url.pathname === "/not-json") {
    res.writeHead(200, { "Content-Type": "text/html" });
    res.end("<html><body>Not a card</body></html>");
    return;
  }
  if (req.method === "GET" && url.pathname === "/__received") {
    const needle = url.searchParams.get("contains") ?? "";
    return json(200, { requests: received.filter((r) => r.body.includes(needle)) });
  }
  if (req.method === "POST" && url.pathname === "/rpc") {
    const body = await readBody(req);
    received.push({ headers: { ...req.headers }, body });
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(body);
    } catch {
      return json(200, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
    }
    const ctx = defaultServerCallContextBuilder({
      extensions: undefined,
      user: undefined,
      headers: req.headers,
      requestedVersion: (req.headers["a2a-version"] as string | undefined) ?? undefined,
    });
    const legacy = typeof parsed.method === "string" && parsed.method.includes("/");
    const out = await (legacy ? handlers.legacy : handlers.v1).handle(parsed, ctx);
    if (out && typeof (out as AsyncGenerator)[Symbol.asyncIterator] === "function") {
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
      for await (const ev of out as AsyncGenerator<unknown>) res.write(`data: ${JSON.stringify(ev)}\n\n`);
      res.end();
      return;
    }
    return json(200, out);
  }
  json(404, { error: "not found" });
}
