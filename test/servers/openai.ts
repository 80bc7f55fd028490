import type { Handler } from "./index";
import { createOpenAIHandler } from "./openai-chat";

const chat = createOpenAIHandler();

/**
 * The local OpenAI-compatible server: chat completions (and GET /__requests)
 * are answered by openai-chat.ts; this module answers embeddings.
 * An OpenAI-compatible embeddings server (POST /v1/embeddings). Deterministic
 * 64-dimension vectors from the text. Behaviour is chosen by the model name,
 * so tests running in parallel do not share state:
 *  - `fail-<token>`: always 500.
 *  - `ratelimit-once-<token>`: the first request answers 429 with Retry-After: 1.
 *  - `ratelimit-second-<token>`: the second request answers 429 with Retry-After: 120 (once).
 *  - `unauthorized-<token>`: 401.
 *  - `slow-<token>`: every answer takes 400 ms.
 * GET /stats?model=... -> {requests, inputs, rejected} for that model.
 */
const stats = new Map<string, { requests: number; inputs: number; rejected: number }>();

function vector(text: string, dims = 64): number[] {
  const v = new Array(dims).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
    v[(h >>> 0) % dims] += 1;
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

const json = (res: Parameters<Handler>[1], status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};

export const handler: Handler = async (req, res) => {
  const url = new URL(req.url ?? "/", "http://x");
  if (url.pathname === "/v1/chat/completions" || url.pathname === "/__requests" || url.pathname === "/v1/models") return chat(req, res);
  if (req.method === "GET" && url.pathname === "/stats") {
    return json(res, 200, stats.get(url.searchParams.get("model") ?? "") ?? { requests: 0, inputs: 0, rejected: 0 });
  }
  if (req.method !== "POST" || url.pathname !== "/v1/embeddings") return json(res, 404, { error: { message: "not found" } });
  let raw = "";
  for await (const chunk of req) raw += chunk;
  const body = JSON.parse(raw) as { model: string; input: string | string[]; dimensions?: number };
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  const s = stats.get(body.model) ?? { requests: 0, inputs: 0, rejected: 0 };
  stats.set(body.model, s);
  s.requests++;
  if (body.model.startsWith("fail-")) {
    s.rejected++;
    return json(res, 500, { error: { message: "upstream exploded", type: "server_error" } });
  }
  if (body.model.startsWith("unauthorized-")) {
    s.rejected++;
    return json(res, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
  }
  if ((body.model.startsWith("ratelimit-once-") && s.requests === 1) || (body.model.startsWith("ratelimit-second-") && s.requests === 2)) {
    s.rejected++;
    const retryAfter = body.model.startsWith("ratelimit-once-") ? "1" : "120";
    return json(res, 429, { error: { message: "Rate limit reached", type: "requests" } }, { "Retry-After": retryAfter });
  }
  if (body.model.startsWith("slow-")) await new Promise((r) => setTimeout(r, 400));
  s.inputs += inputs.length;
  json(res, 200, {
    object: "list",
    model: body.model,
    data: inputs.map((t, index) => ({ object: "embedding", index, embedding: vector(t, body.dimensions ?? 64) })),
    usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
  });
};
