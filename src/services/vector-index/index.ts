import type { Env } from "../../env";
import { ingestConfig } from "../../lib/config";
import { localVectorIndex } from "./local";
import type { VectorIndex } from "./types";
import { vectorizeIndex } from "./vectorize";

export type { VectorIndex, VectorMatch, VectorRecord } from "./types";

/** VECTOR_INDEX: `local` (default) or `vectorize` (needs the VECTORIZE binding). */
export function vectorIndexFor(env: Env): VectorIndex {
  if (ingestConfig(env).vectorIndex === "vectorize") {
    if (!env.VECTORIZE) throw new Error("VECTOR_INDEX=vectorize but the VECTORIZE binding is not configured (wrangler.toml [[vectorize]])");
    return vectorizeIndex(env.VECTORIZE);
  }
  return localVectorIndex(env.LOCAL_VECTOR_INDEX);
}
