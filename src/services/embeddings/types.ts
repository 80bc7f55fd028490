// The embedder contract and its errors, apart from the provider factory in
// index.ts: providers import these without importing the factory that imports them.

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
  /** A query's embedding at once, when it is computed here without waiting for anything (the hash embedder). */
  embedNow?(text: string): number[];
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
