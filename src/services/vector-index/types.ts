/**
 * The vector index behind one interface. Vectors live in a namespace per
 * knowledge base, so a query can never return another knowledge base's (or
 * tenant's) vectors. Ids are chunk ids. Matches are candidates only: callers
 * join them to D1, which decides what is searchable (active generation, not
 * deleted).
 */
export interface VectorRecord {
  id: string;
  documentId: string;
  values: number[] | Float32Array;
}

export interface VectorMatch {
  id: string;
  /** Cosine similarity. */
  score: number;
}

export interface VectorIndex {
  readonly name: "local" | "vectorize";
  /** The largest topK one query may ask for. */
  readonly maxTopK: number;
  upsert(knowledgeBaseId: string, records: VectorRecord[]): Promise<void>;
  /**
   * `version`: the knowledge base's index version, read before this call; given, the local index may answer from
   * (and keep) a copy of a small knowledge base's vectors in this isolate (./isolate-copies.ts).
   */
  query(knowledgeBaseId: string, vector: number[] | Float32Array, topK: number, version?: number): Promise<VectorMatch[]>;
  /** The matches from this isolate's copy at `version`, at once; null when there is none (the local index only). */
  queryCopy?(knowledgeBaseId: string, vector: number[] | Float32Array, topK: number, version: number): VectorMatch[] | null;
  deleteByIds(knowledgeBaseId: string, ids: string[]): Promise<void>;
  /** Removes every vector of a knowledge base at once; false when the implementation can only delete by id. */
  dropKnowledgeBase(knowledgeBaseId: string): Promise<boolean>;
}
