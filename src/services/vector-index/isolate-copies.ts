import { sql, type SQL } from "drizzle-orm";
import { HeldVectors, type VectorsCopy } from "./held-vectors";
import type { VectorMatch } from "./types";

/**
 * Copies of small knowledge bases' vectors in the isolate that searches them (README "Latency"). A search of a
 * knowledge base whose local vector index holds at most COPY_MAX_BYTES of floats gets the vectors along with its
 * first query's matches; its next searches in this isolate score them here, without a call to the index's
 * Durable Object (and a turn's search, whose statements are then ready at once, rides in the turn's read:
 * src/services/chats/search-ahead.ts).
 *
 * A copy is tagged with the knowledge base's index version (`knowledge_bases.index_version`) as read before the
 * query that brought it, and used only for a search at that same version. The version is raised in the same batch
 * as every change of what search may return from the index: a document's new vectors are written to the index
 * before the swap that makes them searchable raises it, and a deleted document's leave search with the version
 * raised. So a copy holds every vector the version it is tagged with can return; it may hold more (vectors of
 * a document still being processed, or of one since deleted), which search drops as it does the index's own:
 * D1 decides what is live (src/services/retrieval/search.ts).
 */

/** The most floats one knowledge base's copy may take: 1,024 vectors of 512 dimensions, 341 of 1,536. */
export const COPY_MAX_BYTES = 2 * 1024 * 1024;
/** The most all copies in an isolate take (a production isolate has 128 MB); the least recently used go first. */
export const COPIES_MAX_BYTES = 16 * 1024 * 1024;

interface Copy {
  version: number;
  held: HeldVectors;
  bytes: number;
}

const copies = new Map<string, Copy>();
let bytesHeld = 0;

/** The statement that raises a knowledge base's index version (in the batch of the change it stands for). */
export function indexVersionRaised(knowledgeBaseId: string): SQL {
  return sql`UPDATE knowledge_bases SET index_version = index_version + 1 WHERE id = ${knowledgeBaseId}`;
}

/** The best `topK` matches of the unit query `q` from this isolate's copy at `version`; null without one. */
export function copyMatches(knowledgeBaseId: string, version: number, q: Float32Array, topK: number): VectorMatch[] | null {
  const copy = copies.get(knowledgeBaseId);
  if (!copy || copy.version !== version) return null;
  if (copy.held.count && copy.held.dims !== q.length) return null; // the index's own call says what is wrong
  copies.delete(knowledgeBaseId); // most recently used last
  copies.set(knowledgeBaseId, copy);
  if (copy.held.count === 0) return [];
  return copy.held.best(q, topK).map(({ pos, score }) => ({ id: copy.held.ids[pos], score }));
}

/** Keeps `vectors`, the index's vectors as a query returned them after `version` was read. */
export function keepCopy(knowledgeBaseId: string, version: number, vectors: VectorsCopy): void {
  const current = copies.get(knowledgeBaseId);
  if (current && current.version > version) return; // a later one is kept already
  const bytes = vectors.vectors.byteLength;
  if (bytes > COPY_MAX_BYTES) return;
  dropCopy(knowledgeBaseId);
  while (bytesHeld + bytes > COPIES_MAX_BYTES && copies.size) dropCopy(copies.keys().next().value!);
  copies.set(knowledgeBaseId, { version, held: HeldVectors.fromCopy(vectors), bytes });
  bytesHeld += bytes;
}

function dropCopy(knowledgeBaseId: string): void {
  const copy = copies.get(knowledgeBaseId);
  if (!copy) return;
  copies.delete(knowledgeBaseId);
  bytesHeld -= copy.bytes;
}

/** Tests: forgets every copy. */
export function clearCopies(): void {
  copies.clear();
  bytesHeld = 0;
}
