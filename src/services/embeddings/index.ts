import type { Env } from "../../env";
import { hashEmbedder } from "./hash";
import { openAiEmbedder } from "./openai";
import { EmbeddingConfigError, type Embedder } from "./types";
import { workersAiEmbedder } from "./workers-ai";

export { EmbeddingConfigError, EmbeddingRateLimitError, type Embedder } from "./types";

function positiveInt(value: string | undefined): number | undefined {
  if (!value?.trim()) return undefined;
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export interface EmbedderOptions {
  /** Called with the tokens each provider call consumed (paid providers only), for metering. */
  onUsage?: (tokens: number) => void;
}

/** EMBEDDING_PROVIDER: `hash` (default), `openai`, `workers-ai`. */
export function embedderFor(env: Env, options: EmbedderOptions = {}): Embedder {
  const provider = (env.EMBEDDING_PROVIDER ?? "hash").trim().toLowerCase();
  const model = env.EMBEDDING_MODEL?.trim() || undefined;
  const dimensions = positiveInt(env.EMBEDDING_DIMENSIONS);
  switch (provider) {
    case "hash":
    case "":
      return hashEmbedder(dimensions ?? 512);
    case "openai": {
      const baseURL = env.EMBEDDING_BASE_URL?.trim() || env.OPENAI_BASE_URL?.trim() || "https://api.openai.com/v1";
      const apiKey = env.EMBEDDING_API_KEY?.trim() || env.OPENAI_API_KEY?.trim() || "";
      return openAiEmbedder({ baseURL, apiKey, model: model ?? "text-embedding-3-small", dimensions, onUsage: options.onUsage });
    }
    case "workers-ai":
      if (!env.AI) throw new EmbeddingConfigError("EMBEDDING_PROVIDER=workers-ai but the AI binding is not configured (wrangler.toml [ai])");
      return workersAiEmbedder(env.AI, model ?? "@cf/baai/bge-small-en-v1.5", options.onUsage);
    default:
      throw new EmbeddingConfigError(`Unknown EMBEDDING_PROVIDER '${provider}' (use hash, openai or workers-ai)`);
  }
}
