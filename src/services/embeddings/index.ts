import type { Env } from "../../env";
import { hashEmbedder } from "./hash";
import { openAiEmbedder } from "./openai";
import { EmbeddingConfigError, type Embedder } from "./types";
import { workersAiEmbedder } from "./workers-ai";
import { config } from "../../lib/config";

export { EmbeddingConfigError, EmbeddingRateLimitError, type Embedder } from "./types";

export interface EmbedderOptions {
  /** Called with the tokens each provider call consumed (paid providers only), for metering. */
  onUsage?: (tokens: number) => void;
}

/** EMBEDDING_PROVIDER: `hash` (default), `openai`, `workers-ai`. */
export function embedderFor(env: Env, options: EmbedderOptions = {}): Embedder {
  const { provider, model, dimensions, baseURL, apiKey } = config(env).embeddings;
  switch (provider) {
    case "hash":
    case "":
      return hashEmbedder(dimensions ?? 512);
    case "openai": {
      return openAiEmbedder({ baseURL, apiKey, model: model ?? "text-embedding-3-small", dimensions, onUsage: options.onUsage });
    }
    case "workers-ai":
      if (!env.AI) throw new EmbeddingConfigError("EMBEDDING_PROVIDER=workers-ai but the AI binding is not configured (wrangler.toml [ai])");
      return workersAiEmbedder(env.AI, model ?? "@cf/baai/bge-small-en-v1.5", options.onUsage);
    default:
      throw new EmbeddingConfigError(`Unknown EMBEDDING_PROVIDER '${provider}' (use hash, openai or workers-ai)`);
  }
}
