import type { Env } from "../../env";
import { hashEmbedder } from "./hash";
import { openAiEmbedder } from "./openai";
import { workersAiEmbedder } from "./workers-ai";

/**
 * Embeddings behind one interface. `model` and `dimensions` identify the
 * vector space: a knowledge base records them when first indexed, and a
 * mismatch is refused rather than silently mixed (services/ingest/process.ts).
 */
export interface Embedder {
  readonly provider: "hash" | "openai" | "workers-ai";
  /** Model id recorded on the knowledge base, e.g. `hash-v1-512`, `text-embedding-3-small`. */
  readonly model: string;
  readonly dimensions: number;
  /** Texts per call the provider accepts; callers batch by it. */
  readonly maxBatchSize: number;
  embed(texts: string[], kind: "document" | "query"): Promise<number[][]>;
}

/** The provider asked us to slow down; `retryAfterSeconds` comes from Retry-After when given. */
export class EmbeddingRateLimitError extends Error {
  constructor(message: string, readonly retryAfterSeconds: number | null) {
    super(message);
    this.name = "EmbeddingRateLimitError";
  }
}

/** The provider refused the request for a reason retrying will not fix (bad key, unknown model). */
export class EmbeddingConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EmbeddingConfigError";
  }
}

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
