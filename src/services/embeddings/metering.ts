import type { Database } from "../../db/client";
import type { Env } from "../../env";
import { recordUsage, type Actor } from "../billing/metering";
import { config, DEFAULT_EMBEDDING_PRICE_PER_1K } from "../../lib/config";

/**
 * Paid embedding calls (document indexing and query embedding with the `openai`
 * or `workers-ai` provider) go through the one metering path as `embedding`.
 * The price is EMBEDDING_PRICE_PER_1K credits per 1,000 tokens (default 0.02);
 * the offline `hash` embedder is free and never metered.
 */
export { DEFAULT_EMBEDDING_PRICE_PER_1K };

export function embeddingPricePer1k(env: Env): number {
  return config(env).embeddings.pricePer1k;
}

export async function meterEmbedding(
  db: Database,
  env: Env,
  input: { organizationId: string; tenantId: string; model: string; tokens: number; actor?: Actor | null },
): Promise<void> {
  if (input.tokens <= 0) return;
  try {
    await recordUsage(db, {
      organizationId: input.organizationId,
      tenantId: input.tenantId,
      operation: "embedding",
      model: input.model,
      pricing: { input_per_1k: embeddingPricePer1k(env), output_per_1k: 0 },
      usage: { input_tokens: input.tokens, output_tokens: 0 },
      actor: input.actor ?? null,
    });
  } catch (e) {
    // The embedding already happened; a failed record must not fail indexing or search.
    console.error("could not record embedding usage:", e);
  }
}
