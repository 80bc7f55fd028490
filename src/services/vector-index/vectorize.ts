import type { VectorIndex } from "./types";

/**
 * Cloudflare Vectorize. Documented limits honoured here: at most 1,000 vectors
 * per upsert from a Worker; topK at most 100 when neither values nor metadata
 * are returned (20 otherwise), so queries ask for ids and scores only and the
 * text is joined from D1. Isolation: one namespace per knowledge base (ids are
 * globally unique chunk ids, so deletes need no namespace). Mutations are
 * asynchronous: a new vector becomes queryable a few seconds after upsert.
 */
export const VECTORIZE_UPSERT_BATCH = 1000;
export const VECTORIZE_DELETE_BATCH = 1000;
export const VECTORIZE_MAX_TOP_K = 100;

export function vectorizeIndex(binding: Vectorize): VectorIndex {
  return {
    name: "vectorize",
    maxTopK: VECTORIZE_MAX_TOP_K,
    async upsert(knowledgeBaseId, records) {
      for (let i = 0; i < records.length; i += VECTORIZE_UPSERT_BATCH) {
        await binding.upsert(
          records.slice(i, i + VECTORIZE_UPSERT_BATCH).map((r) => ({
            id: r.id,
            values: Array.from(r.values),
            namespace: knowledgeBaseId,
            metadata: { document_id: r.documentId },
          })),
        );
      }
    },
    async query(knowledgeBaseId, vector, topK) {
      const res = await binding.query(Array.from(vector), {
        topK: Math.max(1, Math.min(topK, VECTORIZE_MAX_TOP_K)),
        namespace: knowledgeBaseId,
        returnValues: false,
        returnMetadata: "none",
      });
      return res.matches.map((m) => ({ id: m.id, score: m.score }));
    },
    async deleteByIds(_knowledgeBaseId, ids) {
      for (let i = 0; i < ids.length; i += VECTORIZE_DELETE_BATCH) {
        await binding.deleteByIds(ids.slice(i, i + VECTORIZE_DELETE_BATCH));
      }
    },
    async dropKnowledgeBase() {
      // Vectorize cannot drop a namespace: the garbage list deletes by id.
      return false;
    },
  };
}
