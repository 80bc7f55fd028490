import { createOpenAI } from "@ai-sdk/openai";
import { generateText, isStepCount, jsonSchema, streamText, tool, type JSONSchema7, type ModelMessage, type ToolSet } from "ai";
import type { Env } from "../../env";
import { estimateTokens } from "../../lib/text";
import type { ModelInfo } from "./registry";
import { config, DEFAULT_OPENAI_BASE_URL } from "../../lib/config";
import { plainTextMessages, streamChatCompletion } from "./openai-stream";

/**
 * Provider models through the AI SDK's OpenAI provider, using the
 * chat-completions API so any OpenAI-compatible server (OpenAI, vLLM, Ollama,
 * LiteLLM, ...) works. `openai(...)` would call /responses, which most
 * compatible servers lack (STACK.md §6).
 */
export { DEFAULT_OPENAI_BASE_URL };

export function languageModel(env: Env, info: ModelInfo) {
  const provider = createOpenAI({
    baseURL: config(env).models.openaiBaseUrl,
    apiKey: config(env).models.openaiApiKey,
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

/**
 * What went wrong upstream, in words a client may see: the provider's HTTP status, or that it could not be
 * reached. Never the provider's own message (it can echo part of the API key). After the SDK's retries the
 * error is a RetryError whose `lastError` holds the provider's answer.
 */
export function describeError(e: unknown): { message: string; retryable: boolean } {
  const outer = e as { lastError?: unknown };
  const err = (outer?.lastError ?? e) as { statusCode?: number; isRetryable?: boolean; providerMessage?: string };
  const status = err?.statusCode;
  const retryable = err?.isRetryable ?? (status === undefined || status === 429 || status >= 500);
  const detail = status
    ? `the model provider answered HTTP ${status}`
    : err?.providerMessage
      ? `the model provider reported an error: ${err.providerMessage.slice(0, 200)}`
      : "the model provider could not be reached";
  return { message: `Model call failed: ${detail}`, retryable };
}

export interface StreamRequest {
  system: string;
  messages: ModelMessage[];
  signal: AbortSignal;
  onDelta: (text: string) => void | Promise<void>;
  maxOutputTokens?: number;
}

/** The options every streamed call shares. */
const streamBase = (env: Env, info: ModelInfo, req: StreamRequest) => ({
  model: languageModel(env, info),
  system: req.system,
  messages: req.messages,
  abortSignal: req.signal,
  maxRetries: 1,
  maxOutputTokens: req.maxOutputTokens,
  // The failure reaches the turn (readStream); the log gets one line instead of the SDK's dump of the whole error.
  onError: ({ error }: { error: unknown }) => console.warn(`model ${info.id}: ${describeError(error).message}`),
});

/**
 * Reads a started stream to its end: text deltas go to `onDelta`, steps are counted, usage is the
 * provider's total (or an estimate). A failure becomes ProviderError with what was generated so far;
 * an abort rethrows the abort reason.
 */
async function readStream(req: StreamRequest, start: () => ReturnType<typeof streamText>): Promise<{ text: string; usage: TokenUsage; steps: number }> {
  let text = "";
  let steps = 0;
  let finalUsage: TokenUsage | null = null;
  const promptTokens = estimateTokens(req.system) + req.messages.reduce((s, m) => s + estimateTokens(JSON.stringify(m.content)), 0);
  const estimate = () => ({ input_tokens: promptTokens, output_tokens: estimateTokens(text) });
  try {
    for await (const part of start().stream) {
      if (part.type === "text-delta") {
        text += part.text;
        await req.onDelta(part.text);
      } else if (part.type === "finish-step") {
        steps++;
      } else if (part.type === "finish") {
        finalUsage = usageOf(part.totalUsage, estimate());
      } else if (part.type === "error") {
        throw part.error;
      } else if (part.type === "abort") {
        break;
      }
    }
  } catch (e) {
    if (req.signal.aborted) throw req.signal.reason ?? e;
    const { message, retryable } = describeError(e);
    throw new ProviderError(message, text, estimate(), retryable);
  }
  if (req.signal.aborted) throw req.signal.reason;
  return { text, usage: finalUsage ?? estimate(), steps };
}

/** Streams an answer; returns the full text and usage, or throws ProviderError / the abort reason. */
export async function streamAnswer(env: Env, info: ModelInfo, req: StreamRequest): Promise<{ text: string; usage: TokenUsage }> {
  if (plainTextMessages(req.messages)) return streamPlain(env, info, req, req.messages);
  const { text, usage } = await readStream(req, () => streamText(streamBase(env, info, req)));
  return { text, usage };
}

/** A plain answer (text only, no tools) read straight from the provider's stream (src/services/models/openai-stream.ts). */
async function streamPlain(env: Env, info: ModelInfo, req: StreamRequest, messages: Array<{ role: string; content: string }>): Promise<{ text: string; usage: TokenUsage }> {
  let text = "";
  const promptTokens = estimateTokens(req.system) + messages.reduce((s, m) => s + estimateTokens(JSON.stringify(m.content)), 0);
  const estimate = () => ({ input_tokens: promptTokens, output_tokens: estimateTokens(text) });
  try {
    const { usage } = await streamChatCompletion(env, info, { ...req, messages }, (t) => (text += t));
    if (req.signal.aborted) throw req.signal.reason;
    return { text, usage: usageOf(usage ?? undefined, estimate()) };
  } catch (e) {
    if (req.signal.aborted) throw req.signal.reason ?? e;
    const { message, retryable } = describeError(e);
    console.warn(`model ${info.id}: ${message}`);
    throw new ProviderError(message, text, estimate(), retryable);
  }
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

/** A toolbox tool as the model loop sees it: `execute` runs it through the turn's ToolRunner and returns the text the model reads. */
export interface LoopTool {
  name: string;
  description: string;
  inputSchema: JSONSchema7;
  execute: (input: Record<string, unknown>, callId: string) => Promise<string>;
}

export interface ToolLoopRequest extends StreamRequest {
  tools: LoopTool[];
  /** Tool steps allowed; the step after the last one must answer (tool choice "none"). */
  maxSteps: number;
}

/**
 * The multi-step tool loop of a tool-calling model, streamed: each step either
 * calls tools (executed by `LoopTool.execute`, results fed back) or answers;
 * the answer's text streams through `onDelta` as it is generated. After
 * `maxSteps` tool steps the next step is made with tool choice "none", so a
 * model that keeps calling tools still ends with an answer. Usage is the sum
 * over all steps.
 */
export async function streamAnswerWithTools(env: Env, info: ModelInfo, req: ToolLoopRequest): Promise<{ text: string; usage: TokenUsage; steps: number }> {
  const tools: ToolSet = Object.fromEntries(
    req.tools.map((t) => [
      t.name,
      tool({
        description: t.description,
        inputSchema: jsonSchema<Record<string, unknown>>(t.inputSchema),
        execute: async (input, { toolCallId }) => t.execute(input, toolCallId),
      }),
    ]),
  );
  return readStream(req, () =>
    streamText({
      ...streamBase(env, info, req),
      tools,
      stopWhen: isStepCount(req.maxSteps + 1),
      prepareStep: ({ stepNumber }) => (stepNumber >= req.maxSteps ? { toolChoice: "none" as const } : {}),
    }),
  );
}
