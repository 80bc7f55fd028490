import { EmbeddingConfigError, EmbeddingRateLimitError, type Embedder } from "./types";

/** Retry-After up to this long is waited out in place; longer ones retry the queue message later. */
export const MAX_INLINE_WAIT_SECONDS = 10;
const MAX_INLINE_RETRIES = 2;
export const OPENAI_BATCH_SIZE = 64;

/** Seconds from `Retry-After` (seconds or an HTTP date) or `retry-after-ms`; null when absent. */
export function retryAfterSeconds(headers: Record<string, string> | undefined, now = Date.now()): number | null {
  if (!headers) return null;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number(lower["retry-after-ms"]);
  if (Number.isFinite(ms) && ms >= 0 && lower["retry-after-ms"] !== undefined) return ms / 1000;
  const ra = lower["retry-after"];
  if (ra === undefined) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra);
  const at = Date.parse(ra);
  return Number.isFinite(at) ? Math.max(0, (at - now) / 1000) : null;
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Any OpenAI-compatible /v1/embeddings server (OpenAI, Ollama, vLLM, LM
 * Studio, ...) through the AI SDK's OpenAI provider. The SDK's own retries are
 * off: a 429 is handled here so that Retry-After is honoured and only the
 * failed batch is sent again. The SDK is loaded on first use.
 */
export function openAiEmbedder(opts: {
  baseURL: string;
  apiKey: string;
  model: string;
  dimensions?: number;
  onUsage?: (tokens: number) => void;
}): Embedder {
  let loaded: Promise<{ model: import("ai").EmbeddingModel; sdk: typeof import("ai") }> | null = null;
  const load = () =>
    (loaded ??= Promise.all([import("@ai-sdk/openai"), import("ai")]).then(([{ createOpenAI }, sdk]) => ({
      sdk,
      model: createOpenAI({ baseURL: opts.baseURL.replace(/\/+$/, ""), apiKey: opts.apiKey || "not-needed" }).embedding(opts.model),
    })));
  let dims = opts.dimensions ?? 0;
  return {
    provider: "openai",
    model: opts.model,
    get dimensions() {
      return dims;
    },
    maxBatchSize: OPENAI_BATCH_SIZE,
    async embed(texts) {
      const { model, sdk } = await load();
      const { APICallError, embedMany, RetryError } = sdk;
      const unwrap = (e: unknown) => (RetryError.isInstance(e) ? (e.lastError ?? e) : e);
      for (let attempt = 0; ; attempt++) {
        try {
          const { embeddings, usage } = await embedMany({
            model,
            values: texts,
            maxRetries: 0,
            ...(opts.dimensions ? { dimensions: opts.dimensions } : {}),
          });
          if (embeddings.length !== texts.length) throw new Error(`the embedding server returned ${embeddings.length} vectors for ${texts.length} texts`);
          if (!dims) dims = embeddings[0]?.length ?? 0;
          // The provider's own count when it reports one, else about 4 characters a token.
          opts.onUsage?.(usage?.tokens || Math.ceil(texts.reduce((n, t) => n + t.length, 0) / 4));
          return embeddings;
        } catch (raw) {
          const e = unwrap(raw);
          if (APICallError.isInstance(e)) {
            const status = e.statusCode ?? 0;
            if (status === 429) {
              const wait = retryAfterSeconds(e.responseHeaders);
              if (attempt < MAX_INLINE_RETRIES && wait !== null && wait <= MAX_INLINE_WAIT_SECONDS) {
                await sleep(wait * 1000);
                continue;
              }
              throw new EmbeddingRateLimitError(`The embedding provider is rate limiting requests (429)`, wait);
            }
            if ([400, 401, 403, 404, 422].includes(status)) {
              throw new EmbeddingConfigError(
                `The embedding provider refused the request (${status}): ${(e.responseBody ?? e.message).slice(0, 300)}`,
              );
            }
          }
          throw e;
        }
      }
    },
  };
}
