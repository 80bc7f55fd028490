import type http from "node:http";

/**
 * The chat-completions half of the local OpenAI-compatible test server
 * (test/servers/openai.ts routes to it), also used by `npm run bench:stream`.
 * It speaks the real protocol (JSON and SSE streaming with a final usage
 * chunk, tool calls) and behaves by model name:
 *   - any model: answers "<ANSWER>" (citing [1]), streamed word by word;
 *   - "*-fail-mid-stream": streams a few tokens, then breaks the connection;
 *   - "*-error-mid-stream": streams a few tokens, then an error chunk (`data: {"error": ...}`), as providers do;
 *   - "*-error": answers HTTP 500;
 *   - "*-slow": waits `slowMs` between tokens.
 * With `tools` in the request (and `tool_choice` other than "none") it follows
 * directives in the last user message:
 *   - `@call <tool> {json}` (one or more): the first step calls those tools (in
 *     parallel); the next answers;
 *   - `@loop`: every step calls the first tool again (to exhaust the step budget);
 *   - `@notools`: answers at once;
 *   - none: calls the first tool once with a query taken from the message, then answers.
 * After tool results it answers citing the first `[n]` of each tool result.
 * GET /__requests?contains=<text> counts requests whose body contains <text>.
 * Structured output named "memory_extraction" (services/memory/extract.ts) is
 * answered with the first-person statements of the <user_message> as memories.
 */
export interface OpenAIServerOptions {
  /** Delay between streamed tokens, ms. */
  cadenceMs?: number;
  slowMs?: number;
  answer?: string;
  /** Called when a streamed token is written (benchmarks measure the latency the service adds). */
  onToken?: (requestBody: string, index: number, at: number) => void;
}

const DEFAULT_ANSWER =
  "According to the knowledge base, the answer is stated in the first source [1]. Further details are in the documents [1].";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createOpenAIHandler(opts: OpenAIServerOptions = {}) {
  const log: string[] = [];
  return async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname === "/__requests") {
      const needle = url.searchParams.get("contains") ?? "";
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ count: log.filter((b) => b.includes(needle)).length }));
      return;
    }
    let raw = "";
    for await (const chunk of req) raw += chunk;
    log.push(raw);
    if (log.length > 5000) log.splice(0, 1000);

    if (url.pathname === "/v1/models") {
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ data: [{ id: "test-model", object: "model" }] }));
      return;
    }
    if (url.pathname !== "/v1/chat/completions" || req.method !== "POST") {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    const body = JSON.parse(raw || "{}");
    const model: string = body.model ?? "test-model";
    if (model.endsWith("-error")) {
      res.statusCode = 500;
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ error: { message: "upstream exploded", type: "server_error" } }));
      return;
    }
    const messages: Array<{ role: string; content: unknown }> = body.messages ?? [];
    const lastUser = [...messages].reverse().find((m) => m.role === "user");
    const lastUserText = typeof lastUser?.content === "string" ? lastUser.content : JSON.stringify(lastUser?.content ?? "");
    const promptTokens = Math.ceil(JSON.stringify(messages).length / 4);
    const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
    const created = Math.floor(Date.now() / 1000);

    if (body.response_format?.json_schema?.name === "memory_extraction") {
      const said = /<user_message>([\s\S]*)<\/user_message>/.exec(lastUserText)?.[1] ?? lastUserText;
      const statements = said.split(/(?<=[.!?])\s+|\n+/).map((x) => x.trim()).filter((x) => /^(my|i|i'm)\b/i.test(x) && !x.endsWith("?"));
      const content = JSON.stringify({
        memories: statements.map((x) => ({
          content: x,
          kind: /\b(prefer|like|love)\b/i.test(x) ? "preference" : "fact",
          entities: [{ name: "User", type: "person" }, ...(x.match(/\b[A-Z][\w-]*\d*\b/g) ?? []).filter((n) => n !== "My" && n !== "I").map((n) => ({ name: n, type: "entity" }))],
          relations: (x.match(/\b[A-Z][\w-]*\d*\b/g) ?? []).filter((n) => n !== "My" && n !== "I").map((n) => ({ source: "User", target: n, relation: "mentions" })),
        })),
      });
      const usage = { prompt_tokens: promptTokens, completion_tokens: Math.ceil(content.length / 4), total_tokens: promptTokens + Math.ceil(content.length / 4) };
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ id, object: "chat.completion", created, model, choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage }));
      return;
    }

    const toolMessages = messages.filter((m) => m.role === "tool");
    const hasTools = Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== "none";
    const toolCalls = hasTools ? scriptedToolCalls(body.tools, lastUserText, toolMessages.length) : [];
    if (toolCalls.length) {
      const usage = { prompt_tokens: promptTokens, completion_tokens: 12, total_tokens: promptTokens + 12 };
      if (body.stream) {
        res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
        res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: { role: "assistant", tool_calls: toolCalls.map((t, index) => ({ index, ...t })) }, finish_reason: null }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`);
        res.end("data: [DONE]\n\n");
      } else {
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify({ id, object: "chat.completion", created, model, choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: toolCalls }, finish_reason: "tool_calls" }], usage }));
      }
      return;
    }

    const answer = toolMessages.length ? citingAnswer(toolMessages) : (opts.answer ?? DEFAULT_ANSWER);
    const tokens = answer.match(/\S+\s*/g) ?? [];
    const usage = { prompt_tokens: promptTokens, completion_tokens: tokens.length, total_tokens: promptTokens + tokens.length };
    if (!body.stream) {
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ id, object: "chat.completion", created, model, choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: "stop" }], usage }));
      return;
    }
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
    const cadence = model.endsWith("-slow") ? (opts.slowMs ?? 200) : (opts.cadenceMs ?? 0);
    const failAfter = model.endsWith("-fail-mid-stream") ? 3 : Infinity;
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })}\n\n`);
    for (let i = 0; i < tokens.length; i++) {
      if (i === 3 && model.endsWith("-error-mid-stream")) {
        res.end(`data: ${JSON.stringify({ error: { message: "The server had an error while processing your request.", type: "server_error" } })}\n\n`);
        return;
      }
      if (i >= failAfter) {
        await sleep(50); // let the first tokens reach the client, then break the connection
        res.destroy();
        return;
      }
      if (cadence) await sleep(cadence);
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: { content: tokens[i] }, finish_reason: null }] })}\n\n`);
      opts.onToken?.(raw, i, performance.now() + performance.timeOrigin);
    }
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  };
}


type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
let callSeq = 0;

/** The tool calls a scripted model makes now (see the header), or none: it answers. */
function scriptedToolCalls(tools: Array<{ function: { name: string } }>, userText: string, toolResults: number): ToolCall[] {
  const call = (name: string, args: unknown): ToolCall => ({ id: `call_${++callSeq}`, type: "function", function: { name, arguments: JSON.stringify(args) } });
  const names = tools.map((t) => t.function.name);
  const query = userText.replace(/@\w+(\s+\S+\s*(\{[^}]*\})?)?/g, "").replace(/^Question:\s*/, "").split("\n")[0].trim().slice(0, 100) || "search";
  if (userText.includes("@notools")) return [];
  if (userText.includes("@loop")) return [call(names[0], { query: `${query} ${toolResults + 1}` })];
  const directives = [...userText.matchAll(/@call\s+([A-Za-z0-9_-]+)(?:\s+(\{[^}]*\}))?/g)];
  if (directives.length) {
    if (toolResults > 0) return [];
    return directives.filter((d) => names.includes(d[1])).map((d) => call(d[1], d[2] ? JSON.parse(d[2]) : { query }));
  }
  return toolResults === 0 ? [call(names[0], { query })] : [];
}

/** An answer citing the first [n] of each tool result, as a grounded model would. */
function citingAnswer(toolMessages: Array<{ content: unknown }>): string {
  const cites = toolMessages
    .map((m) => /\[(\d+)\]/.exec(typeof m.content === "string" ? m.content : JSON.stringify(m.content))?.[1])
    .filter(Boolean);
  if (!cites.length) return DEFAULT_ANSWER;
  return `According to the tools, ${cites.map((n, i) => `finding ${i + 1} is supported [${n}]`).join(" and ")}. ${DEFAULT_ANSWER}`;
}
