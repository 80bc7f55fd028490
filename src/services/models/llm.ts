import { createOpenAI } from "@ai-sdk/openai";
import { generateText, isStepCount, streamText, tool, type ModelMessage } from "ai";
import { z } from "zod";
import type { Env } from "../../env";
import { estimateTokens } from "../../lib/text";
import type { ModelInfo } from "./registry";

/**
 * Provider models through the AI SDK's OpenAI provider, using the
 * chat-completions API so any OpenAI-compatible server (OpenAI, vLLM, Ollama,
 * LiteLLM, ...) works. `openai(...)` would call /responses, which most
 * compatible servers lack (STACK.md §6).
 */
export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";

export function languageModel(env: Env, info: ModelInfo) {
  const provider = createOpenAI({
    baseURL: (env.OPENAI_BASE_URL || DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, ""),
    apiKey: env.OPENAI_API_KEY ?? "",
  });
  return provider.chat(info.upstream_model);
}

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
}

/** An upstream failure, carrying what was generated and used before it. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly partialText: string,
    readonly usage: TokenUsage,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

function usageOf(u: { inputTokens?: number; outputTokens?: number } | undefined, fallback: TokenUsage): TokenUsage {
  return {
    input_tokens: u?.inputTokens ?? fallback.input_tokens,
    output_tokens: u?.outputTokens ?? fallback.output_tokens,
  };
}

function describeError(e: unknown): { message: string; retryable: boolean } {
  const err = e as { message?: string; statusCode?: number; isRetryable?: boolean; name?: string };
  const status = err?.statusCode;
  const retryable = err?.isRetryable ?? (status === undefined || status === 429 || status >= 500);
  const detail = status ? `the model provider answered ${status}` : "the model provider connection failed";
  return { message: `Model call failed: ${detail}`, retryable };
}

export interface StreamRequest {
  system: string;
  messages: ModelMessage[];
  signal: AbortSignal;
  onDelta: (text: string) => void | Promise<void>;
  maxOutputTokens?: number;
}

/** Streams an answer; returns the full text and usage, or throws ProviderError / the abort reason. */
export async function streamAnswer(env: Env, info: ModelInfo, req: StreamRequest): Promise<{ text: string; usage: TokenUsage }> {
  let text = "";
  const promptTokens = estimateTokens(req.system) + req.messages.reduce((s, m) => s + estimateTokens(JSON.stringify(m.content)), 0);
  let finalUsage: TokenUsage | null = null;
  try {
    const result = streamText({
      model: languageModel(env, info),
      system: req.system,
      messages: req.messages,
      abortSignal: req.signal,
      maxRetries: 1,
      maxOutputTokens: req.maxOutputTokens,
    });
    for await (const part of result.stream) {
      if (part.type === "text-delta") {
        text += part.text;
        await req.onDelta(part.text);
      } else if (part.type === "finish") {
        finalUsage = usageOf(part.totalUsage, { input_tokens: promptTokens, output_tokens: estimateTokens(text) });
      } else if (part.type === "error") {
        throw part.error;
      } else if (part.type === "abort") {
        break;
      }
    }
  } catch (e) {
    if (req.signal.aborted) throw req.signal.reason ?? e;
    const { message, retryable } = describeError(e);
    throw new ProviderError(message, text, { input_tokens: promptTokens, output_tokens: estimateTokens(text) }, retryable);
  }
  if (req.signal.aborted) throw req.signal.reason;
  return { text, usage: finalUsage ?? { input_tokens: promptTokens, output_tokens: estimateTokens(text) } };
}

/** A single non-streamed completion (summaries, follow-up questions, prompt improvement). */
export async function complete(
  env: Env,
  info: ModelInfo,
  req: { system: string; prompt: string; signal?: AbortSignal; maxOutputTokens?: number },
): Promise<{ text: string; usage: TokenUsage }> {
  try {
    const r = await generateText({
      model: languageModel(env, info),
      system: req.system,
      prompt: req.prompt,
      abortSignal: req.signal,
      maxRetries: 1,
      maxOutputTokens: req.maxOutputTokens,
    });
    return {
      text: r.text,
      usage: usageOf(r.usage, { input_tokens: estimateTokens(req.system + req.prompt), output_tokens: estimateTokens(r.text) }),
    };
  } catch (e) {
    if (req.signal?.aborted) throw req.signal.reason ?? e;
    const { message, retryable } = describeError(e);
    throw new ProviderError(message, "", { input_tokens: 0, output_tokens: 0 }, retryable);
  }
}

/**
 * Deep-mode research with tool calling: the model may call
 * `search_knowledge_base` with focused queries (up to `maxSteps` rounds); each
 * call runs our retrieval and reports back what was found.
 */
export async function researchWithTools(
  env: Env,
  info: ModelInfo,
  req: {
    system: string;
    prompt: string;
    signal: AbortSignal;
    maxSteps?: number;
    search: (query: string) => Promise<string>;
  },
): Promise<TokenUsage> {
  try {
    const r = await generateText({
      model: languageModel(env, info),
      system: req.system,
      prompt: req.prompt,
      abortSignal: req.signal,
      maxRetries: 1,
      stopWhen: isStepCount(req.maxSteps ?? 4),
      tools: {
        search_knowledge_base: tool({
          description:
            "Search the knowledge base for passages relevant to a focused query. Returns numbered passages with their source files.",
          inputSchema: z.object({ query: z.string().min(1).max(500).describe("A focused search query") }),
          execute: async ({ query }) => req.search(query),
        }),
      },
    });
    const u = r.totalUsage ?? r.usage;
    return { input_tokens: u?.inputTokens ?? 0, output_tokens: u?.outputTokens ?? 0 };
  } catch (e) {
    if (req.signal.aborted) throw req.signal.reason ?? e;
    const { message, retryable } = describeError(e);
    throw new ProviderError(message, "", { input_tokens: 0, output_tokens: 0 }, retryable);
  }
}
