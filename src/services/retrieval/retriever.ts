import type { Database } from "../../db/client";
import type { KnowledgeBase } from "../../db/schema";
import type { Env } from "../../env";
import type { Actor } from "../billing/metering";
import { searchKnowledgeBase, type Passage as SearchPassage } from "./search";
import type { Passage, Retriever } from "../../contracts/turn";

/** A search result as the answer pipeline cites it. */
export const turnPassage = (p: SearchPassage): Passage => ({
  document_id: p.document_id,
  filename: p.filename,
  chunk_id: p.chunk_id,
  text: p.text,
  score: p.score,
  page: p.page,
  heading: p.heading,
  url: p.url,
});

/** The answer pipeline's view of knowledge-base search (src/services/retrieval). */
export function createRetriever(db: Database, env: Env, kb: KnowledgeBase, actor?: Actor | null): Retriever {
  return async (query, limit, signal) => {
    signal?.throwIfAborted();
    const passages = await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, knowledgeBase: kb, query, limit, actor });
    return passages.map(turnPassage);
  };
}
