import type { ModelMessage } from "ai";
import type { Env } from "../../env";
import { config } from "../../lib/config";
import type { ModelInfo } from "./registry";

/**
 * A streamed chat completion read directly from an OpenAI-compatible `/chat/completions` (README "Latency"): for
 * a plain answer — text messages, no tools — which is most turns. The AI SDK's stream pipeline (a chain of
 * TransformStreams, a JSON parse and a schema validation per chunk) cost about nine tenths of the CPU a streamed
 * token took in the service (bench:cpu); here each chunk is one JSON.parse. Tool loops and images still go
 * through the SDK (src/services/models/llm.ts), and the errors read the same: `HttpFailure` carries the status
 * for `describeError`, and a broken connection is a failure without one.
 */
export class HttpFailure extends Error {
  constructor(
    readonly statusCode: number,
    readonly isRetryable: boolean,
  ) {
    super(`HTTP ${statusCode}`);
  }
}

/** Whether every message is plain text (what this reader sends as is). */
export function plainTextMessages(messages: ModelMessage[]): messages is Array<ModelMessage & { content: string }> {
  return messages.every((m) => typeof m.content === "string" && (m.role === "user" || m.role === "assistant" || m.role === "system"));
}

/** An error the provider reported inside its stream (`data: {"error": {...}}`), after it had answered 200. */
export class ProviderStreamError extends Error {
  readonly isRetryable = true;
  constructor(readonly providerMessage: string) {
    super(`the model provider reported an error: ${providerMessage}`);
  }
}

interface Chunk {
  error?: { message?: string } | string;
  choices?: Array<{ delta?: { content?: string | null } }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** Streams the completion: text to `onDelta`; returns the provider's usage when it sent one. */
export async function streamChatCompletion(
  env: Env,
  info: ModelInfo,
  req: { system: string; messages: Array<{ role: string; content: string }>; signal: AbortSignal; maxOutputTokens?: number; onDelta: (text: string) => void | Promise<void> },
  onText: (text: string) => void,
): Promise<{ usage: { inputTokens?: number; outputTokens?: number } | null }> {
  const res = await post(env, info, req);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let usage: { inputTokens?: number; outputTokens?: number } | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return { usage };
      const chunk = JSON.parse(data) as Chunk;
      if (chunk.error) throw new ProviderStreamError((typeof chunk.error === "string" ? chunk.error : chunk.error.message) || "unknown error");
      if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
      const text = chunk.choices?.[0]?.delta?.content;
      if (text) {
        onText(text);
        await req.onDelta(text);
      }
    }
  }
  return { usage };
}

/** The request, retried once (like the SDK's maxRetries: 1) when the provider answers 429 or 5xx or cannot be reached. */
async function post(env: Env, info: ModelInfo, req: { system: string; messages: Array<{ role: string; content: string }>; signal: AbortSignal; maxOutputTokens?: number }) {
  const models = config(env).models;
  const body = JSON.stringify({
    model: info.upstream_model,
    messages: [{ role: "system", content: req.system }, ...req.messages.map((m) => ({ role: m.role, content: m.content }))],
    stream: true,
    stream_options: { include_usage: true },
    ...(req.maxOutputTokens ? { max_tokens: req.maxOutputTokens } : {}),
  });
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(`${models.openaiBaseUrl.replace(/\/+$/, "")}/chat/completions`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${models.openaiApiKey ?? ""}` },
        body,
        signal: req.signal,
      });
    } catch (e) {
      if (attempt === 0 && !req.signal.aborted) continue;
      throw e;
    }
    if (res.ok && res.body) return res;
    await res.body?.cancel();
    const retryable = res.status === 429 || res.status >= 500;
    if (attempt === 0 && retryable) continue;
    throw new HttpFailure(res.status, retryable);
  }
}
