import type { Embedder } from "./types";

/** Documented output sizes of the Workers AI BGE models. */
export const WORKERS_AI_DIMENSIONS: Record<string, number> = {
  "@cf/baai/bge-small-en-v1.5": 384,
  "@cf/baai/bge-base-en-v1.5": 768,
  "@cf/baai/bge-large-en-v1.5": 1024,
  "@cf/baai/bge-m3": 1024,
};
/** Texts per `AI.run` call (the models' documented batch limit). */
export const WORKERS_AI_BATCH_SIZE = 100;

/**
 * Workers AI through the `AI` binding: `AI.run(model, {text: [...]})` answers
 * `{shape, data: number[][]}`. The BGE models read at most 512 tokens per text;
 * chunks are sized below that (services/parsing/chunker.ts).
 */
export function workersAiEmbedder(ai: Ai, model: string, onUsage?: (tokens: number) => void): Embedder {
  let dims = WORKERS_AI_DIMENSIONS[model] ?? 0;
  return {
    provider: "workers-ai",
    model,
    get dimensions() {
      return dims;
    },
    maxBatchSize: WORKERS_AI_BATCH_SIZE,
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += WORKERS_AI_BATCH_SIZE) {
        const batch = texts.slice(i, i + WORKERS_AI_BATCH_SIZE);
        const res = (await (ai as unknown as { run(m: string, input: unknown): Promise<unknown> }).run(model, { text: batch })) as {
          data?: number[][];
        };
        if (!Array.isArray(res?.data) || res.data.length !== batch.length) {
          throw new Error(`Workers AI returned no embeddings for ${batch.length} texts (model ${model})`);
        }
        out.push(...res.data);
        // Workers AI reports no token counts: about 4 characters a token.
        onUsage?.(Math.ceil(batch.reduce((n, t) => n + t.length, 0) / 4));
      }
      if (!dims && out[0]) dims = out[0].length;
      return out;
    },
  };
}
